import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { CliError, EXIT } from '../errors.js';
import type { Env } from '../output.js';
import { fileEntries, KINDS, SECTION, type Entry, type Kind } from './model.js';
import { CatalogFile, ENV_REFERENCE_ONLY } from './schema.js';

/** A catalog file read, its `${env:NAME}` references filled in, checked, and turned into entries. */
export interface LoadedCatalog {
  file: CatalogFile;
  entries: Entry[];
}

const ENV_REFERENCE = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;

const bad = (file: string, message: string, hint?: string) => new CliError('INVALID_CATALOG', `${file} ${message}`, EXIT.invalid, hint);

/** Parses YAML or JSON (by extension; either for other names). */
export async function parseText(file: string, text: string): Promise<unknown> {
  const ext = extname(file).toLowerCase();
  const yaml = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
  const parseYaml = yaml.parse ?? yaml.default!.parse;
  try {
    return ext === '.json' ? JSON.parse(text) : (parseYaml(text) as unknown);
  } catch (error) {
    throw bad(file, `is not valid ${ext === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
}

/** Replaces every `${env:NAME}` in the file's strings; a variable that is not set is an error naming it. */
export function expandEnvironment(file: string, value: unknown, env: Env, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REFERENCE, (_, name: string) => {
      const found = env[name];
      if (found === undefined || found === '') throw bad(file, `needs the environment variable ${name} (at ${path || 'the top'})`, `Set ${name}: secrets come from the environment, never from the file.`);
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => expandEnvironment(file, item, env, `${path}[${index}]`));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expandEnvironment(file, item, env, path ? `${path}.${key}` : key)]));
  }
  return value;
}

/**
 * Secrets come from the environment, never from the file: a webhook's `secret` and a Discord benefit's
 * `guild_token` must each be one `${env:NAME}` (checked before the environment is filled in).
 */
export function checkSecrets(file: string, raw: unknown): void {
  const refuse = (where: string) => {
    throw bad(file, `holds a secret at ${where}: secrets come from the environment, never from the file`, 'Write `${env:NAME}` there and set NAME in the environment of `till`.');
  };
  const isEnvReference = (value: unknown) => typeof value === 'string' && ENV_REFERENCE_ONLY.test(value);
  const document = (raw ?? {}) as { webhooks?: unknown; benefits?: unknown };
  if (Array.isArray(document.webhooks)) {
    document.webhooks.forEach((webhook, index) => {
      if (webhook && typeof webhook === 'object' && 'secret' in webhook && !isEnvReference((webhook as { secret: unknown }).secret)) refuse(`webhooks[${index}].secret`);
    });
  }
  if (Array.isArray(document.benefits)) {
    document.benefits.forEach((benefit, index) => {
      const properties = benefit && typeof benefit === 'object' ? (benefit as { properties?: unknown }).properties : undefined;
      if (properties && typeof properties === 'object' && 'guild_token' in properties && !isEnvReference((properties as { guild_token: unknown }).guild_token)) {
        refuse(`benefits[${index}].properties.guild_token`);
      }
    });
  }
}

/** Checks a parsed file against the schema, its keys for uniqueness and its references for targets. */
export function checkCatalog(file: string, raw: unknown): LoadedCatalog {
  const parsed = CatalogFile.safeParse(raw ?? {});
  if (!parsed.success) {
    const lines = parsed.error.issues.slice(0, 20).map((issue) => `  ${issue.path.join('.') || '(top)'}: ${issue.message}`);
    throw bad(file, `does not match the catalog schema:\n${lines.join('\n')}`, 'See docs/catalog-as-code.md; editors complete the file from /v1/catalog/schema.json.');
  }
  const entries = fileEntries(parsed.data);
  const keys = new Map<Kind, Set<string>>(KINDS.map((kind) => [kind, new Set<string>()]));
  for (const entry of entries) {
    const seen = keys.get(entry.kind)!;
    if (seen.has(entry.key)) throw bad(file, `has two ${SECTION[entry.kind]} with the key "${entry.key}": keys must be unique within a section`);
    seen.add(entry.key);
  }
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const check = (from: Entry, kind: Kind, key: unknown) => {
    // An object the file does not manage may still be named by its id.
    if (typeof key === 'string' && (keys.get(kind)!.has(key) || UUID.test(key))) return;
    throw bad(file, `: ${SECTION[from.kind]} "${from.key}" refers to the ${kind.replace('_', ' ')} "${String(key)}", which the file does not define`);
  };
  for (const entry of entries) {
    const fields = entry.fields as Record<string, unknown>;
    if (entry.kind === 'benefit' && fields.type === 'meter_credit') check(entry, 'meter', (fields.properties as Record<string, unknown>).meter);
    if (entry.kind === 'product') {
      for (const key of fields.benefits as string[]) check(entry, 'benefit', key);
      for (const attached of fields.custom_fields as { field: string }[]) check(entry, 'custom_field', attached.field);
      for (const price of fields.prices as Record<string, unknown>[]) if (price.amount_type === 'metered_unit') check(entry, 'meter', price.meter);
    }
    if (entry.kind === 'discount') for (const key of fields.products as string[]) check(entry, 'product', key);
  }
  return { file: parsed.data, entries };
}

/** Reads, expands and checks a catalog file. */
export async function loadCatalog(path: string, env: Env): Promise<LoadedCatalog> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CliError('FILE_NOT_FOUND', `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, EXIT.invalid);
  }
  const raw = await parseText(path, text);
  checkSecrets(path, raw);
  return checkCatalog(path, expandEnvironment(path, raw, env));
}
