import { CliError, EXIT } from '../errors.js';
import type { Body } from '../input/data.js';
import { parseMetadata, parseProperties } from '../input/pairs.js';
import type { FieldFlag, Requirement, WriteVerb } from './spec.js';
import { capitalize } from './words.js';

/*
 * Builders for the flags specs share. Their `apply` functions run only when a verb runs; declaring them costs
 * `till --help` nothing but the objects themselves.
 */

const BOTH: readonly WriteVerb[] = ['create', 'update'];

/** `--flag <value>` written to `field` as a string. */
export const text = (flags: string, field: string, description: string, options: { verbs?: readonly WriteVerb[]; required?: Requirement } = {}): FieldFlag => ({
  flags,
  field,
  description,
  verbs: options.verbs ?? BOTH,
  required: options.required,
});

/** Like `text`, but only one of `choices`. */
export const choice = (flags: string, field: string, choices: readonly string[], description: string, options: { verbs?: readonly WriteVerb[]; required?: boolean } = {}): FieldFlag => ({
  flags,
  description: `${description}: ${choices.join(', ')}`,
  verbs: options.verbs ?? BOTH,
  keys: [field],
  required: options.required ? { question: capitalize(description), choices } : undefined,
  apply(value, body) {
    if (!choices.includes(value)) throw invalidFlag(flags, value, `expected one of ${choices.join(', ')}`);
    body[field] = value;
  },
});

/** A whole number written to `field`. */
export const integer = (flags: string, field: string, description: string, options: { verbs?: readonly WriteVerb[]; min?: number } = {}): FieldFlag => ({
  flags,
  description,
  verbs: options.verbs ?? BOTH,
  keys: [field],
  apply(value, body) {
    body[field] = toInteger(flags, value, options.min ?? 0);
  },
});

/** true/false (also yes/no, on/off) written to `field`. */
export const boolean = (flags: string, field: string, description: string, options: { verbs?: readonly WriteVerb[] } = {}): FieldFlag => ({
  flags,
  description: `${description} (true or false)`,
  verbs: options.verbs ?? BOTH,
  keys: [field],
  apply(value, body) {
    body[field] = toBoolean(flags, value);
  },
});

/** `--metadata key=value` (repeatable; `key:=5` for a number or boolean): sets the metadata object whole. */
export const metadata: FieldFlag = {
  flags: '--metadata <key=value>',
  description: 'a metadata entry (repeatable; key:=JSON for a number or boolean); on update it replaces the metadata',
  verbs: BOTH,
  repeatable: true,
  keys: ['metadata'],
  apply(values, body) {
    body.metadata = { ...(isObject(body.metadata) ? body.metadata : {}), ...parseMetadata(values) };
  },
};

/** `--property key=value` (repeatable; `key:=JSON` for other values), merged into `properties`. */
export const properties = (description: string): FieldFlag => ({
  flags: '--property <key=value>',
  description: `${description} (repeatable; key:=JSON for numbers, booleans, lists and objects)`,
  verbs: BOTH,
  repeatable: true,
  keys: ['properties'],
  apply(values, body) {
    mergeProperties(body, parseProperties(values));
  },
});

/** Sets keys inside `properties`, keeping what --data put there. */
export function mergeProperties(body: Body, values: Record<string, unknown>): void {
  body.properties = { ...(isObject(body.properties) ? body.properties : {}), ...values };
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function toInteger(flag: string, value: string, min = 0): number {
  if (!/^-?\d+$/.test(value.trim()) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw invalidFlag(flag, value, `expected a whole number${min > 0 ? ` from ${min}` : min === 0 ? ' (0 or more)' : ''}`);
  }
  return Number(value);
}

export function toBoolean(flag: string, value: string): boolean {
  const text = value.trim().toLowerCase();
  if (['true', 'yes', 'on', '1'].includes(text)) return true;
  if (['false', 'no', 'off', '0'].includes(text)) return false;
  throw invalidFlag(flag, value, 'expected true or false');
}

/** A flag value the CLI cannot use: exit 5, naming the flag. */
export const invalidFlag = (flags: string, value: string, reason: string, hint?: string) =>
  new CliError('INVALID_FLAG', `${flagName(flags)} ${JSON.stringify(value)}: ${reason}.`, EXIT.invalid, hint);

/** '--name <name>' → '--name'. */
export const flagName = (flags: string) => flags.split(/[\s,]+/).find((part) => part.startsWith('--')) ?? flags;

/**
 * The key commander stores a flag's value under: '--mime-type <t>' → mimeType, '--no-archived' → archived. Written
 * here rather than asking commander, so the code that runs verbs does not pull commander out of the start-up bundle.
 */
export const optionKey = (flags: string) =>
  flagName(flags)
    .replace(/^--(no-)?/, '')
    .replace(/-([a-z0-9])/gi, (_, letter: string) => letter.toUpperCase());
