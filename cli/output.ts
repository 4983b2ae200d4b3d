import type { Writable } from 'node:stream';
import { CliError, EXIT } from './errors.js';
import { count } from './resources/words.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** The three standard streams; main() gets them from bin/till, tests could pass others. */
export interface Streams {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  stdin: { isTTY?: boolean };
}

export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

/** Colour only for a terminal, and never when NO_COLOR is set to anything but '' (no-color.org) or TERM=dumb. */
export function colorEnabled(stream: { isTTY?: boolean }, env: Env): boolean {
  if (env.NO_COLOR) return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

const sgr = (on: boolean, open: number, close: number) => (on ? (text: string) => `\x1b[${open}m${text}\x1b[${close}m` : (text: string) => text);

export function createStyle(on: boolean): Style {
  return {
    bold: sgr(on, 1, 22),
    dim: sgr(on, 2, 22),
    red: sgr(on, 31, 39),
    green: sgr(on, 32, 39),
    yellow: sgr(on, 33, 39),
    cyan: sgr(on, 36, 39),
  };
}

/** A failure as both renderings show it. */
export interface FailureView {
  code: string;
  message: string;
  hint?: string;
}

/** A list's page as the API counts it, for the note under the rows. */
export interface PageInfo {
  page: number;
  pagination: { total_count: number; max_page: number };
  /** What the rows are, singular ("customer", "attempt"). */
  unit: string;
  /** The command takes --all (every page at once). */
  all?: boolean;
}

export interface Output {
  readonly json: boolean;
  /** The fields `--json FIELDS` asked for (undefined: every field). */
  readonly fields?: readonly string[];
  /** A person is at the keyboard: stdin and stdout are both terminals. */
  readonly interactive: boolean;
  /** Styles for text written to stdout and to stderr (each is plain unless its stream may have colour). */
  readonly style: { out: Style; err: Style };
  /** The command's result: one JSON document on stdout with --json, the human text otherwise. */
  result(data: unknown, human: (style: Style) => string, options?: { lenient?: boolean }): void;
  /**
   * A list: its rows on stdout (nothing when there are none), and every note about it (that it is empty, which
   * page of how many) on stderr, so a pipe gets rows only. With --json, `data` on stdout and no note.
   */
  list(data: unknown, count: number, human: (style: Style) => string, notes: { empty: string; page?: PageInfo }): void;
  /** One JSON line on stdout whatever the mode (machine-readable progress, e.g. the device code). */
  jsonLine(data: unknown): void;
  /** Progress and instructions for a person, on stderr; silent with --json so stderr carries only errors. */
  note(text: string): void;
  /** A failure: `{"error":{code,message}}` on stderr with --json, the message and hint otherwise. */
  failure(failure: FailureView): void;
}

/** How a command talks to the terminal. With --json, stdout holds only JSON and errors are JSON on stderr. */
export function createOutput(streams: Streams, env: Env, options: { json?: boolean | string }): Output {
  const json = options.json === true || typeof options.json === 'string';
  const fields = typeof options.json === 'string' ? parseFields(options.json) : undefined;
  const out = createStyle(colorEnabled(streams.stdout, env));
  const err = createStyle(colorEnabled(streams.stderr, env));
  const line = (stream: Writable, text: string) => {
    stream.write(text.endsWith('\n') ? text : `${text}\n`);
  };
  // lenient: one line of a stream whose lines differ in shape (`till listen`): a field it lacks is null, not an error.
  const result = (data: unknown, human: (style: Style) => string, options: { lenient?: boolean } = {}) => {
    line(streams.stdout, json ? JSON.stringify(fields ? selectFields(data, fields, options) : data) : human(out));
  };
  const note = (text: string) => {
    if (!json) line(streams.stderr, text);
  };
  return {
    json,
    fields,
    interactive: streams.stdout.isTTY === true && streams.stdin.isTTY === true,
    style: { out, err },
    result,
    list(data, count, human, { empty, page }) {
      if (!json && count === 0) {
        note(empty);
        return;
      }
      result(data, human);
      if (page) {
        const text = pageNote(page);
        if (text) note(err.dim(text));
      }
    },
    jsonLine(data) {
      // Progress for a script (the device code), not the result: never narrowed by --json FIELDS.
      line(streams.stdout, JSON.stringify(data));
    },
    note,
    failure({ code, message, hint }) {
      if (json) {
        line(streams.stderr, JSON.stringify({ error: { code, message } }));
        return;
      }
      line(streams.stderr, `${err.red('✗')} ${message}${hint ? `\n  ${err.dim(hint)}` : ''}`);
    },
  };
}

/** "Page 2 of 3, 12 customers in all: --page 3 for the next, --all for every one."; nothing when one page holds all. */
export function pageNote({ page, pagination, unit, all }: PageInfo): string | undefined {
  if (page >= pagination.max_page) return undefined;
  return `Page ${page} of ${pagination.max_page}, ${count(pagination.total_count, unit)} in all: --page ${page + 1} for the next${all ? ', --all for every one' : ''}.`;
}

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** `--json id,name,customer.email`: the fields, in order; a malformed list is a usage error. */
export function parseFields(text: string): string[] {
  const fields = text.split(',').map((field) => field.trim()).filter(Boolean);
  const bad = fields.find((field) => !FIELD.test(field));
  if (fields.length === 0 || bad !== undefined) {
    throw new CliError('INVALID_FLAG', `--json "${text}": expected a comma-separated list of fields, e.g. --json id,name.`, EXIT.invalid, 'Give --json alone for every field; an argument right after --json is read as its fields, so put --json last.');
  }
  return fields;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The fields `--json FIELDS` names, as gh's `--json name,id` does: of the object, or of each item of a list
 * (`{items, pagination}` keeps its pagination). A dotted field (`customer.email`) reaches into a nested object.
 * A field no object has is a usage error listing the fields there are.
 */
export function selectFields(data: unknown, fields: readonly string[], { lenient = false }: { lenient?: boolean } = {}): unknown {
  const checkFields = lenient ? () => {} : requireFields;
  if (isRecord(data) && Array.isArray(data.items) && isRecord(data.pagination)) {
    if (data.items.length > 0) checkFields(data.items, fields);
    const items = data.items.map((item) => pick(item, fields));
    return { ...data, items };
  }
  if (Array.isArray(data)) {
    if (data.length > 0) checkFields(data, fields);
    return data.map((item) => pick(item, fields));
  }
  checkFields([data], fields);
  return pick(data, fields);
}

const valueAt = (object: unknown, path: string): { found: boolean; value?: unknown } => {
  let current: unknown = object;
  for (const key of path.split('.')) {
    if (!isRecord(current) || !(key in current)) return { found: false };
    current = current[key];
  }
  return { found: true, value: current };
};

function pick(object: unknown, fields: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of fields) {
    const { found, value } = valueAt(object, field);
    picked[field] = found ? value : null;
  }
  return picked;
}

/** Every field must exist on at least one of the objects (a null value counts): a typo is caught, not printed as null. */
function requireFields(objects: readonly unknown[], fields: readonly string[]): void {
  const unknown = fields.filter((field) => !objects.some((object) => valueAt(object, field).found));
  if (unknown.length === 0) return;
  const available = [...new Set(objects.flatMap((object) => (isRecord(object) ? Object.keys(object) : [])))].sort();
  throw new CliError(
    'UNKNOWN_JSON_FIELD',
    `--json: no field ${unknown.map((field) => `"${field}"`).join(', ')} here. Fields: ${available.join(', ')}.`,
    EXIT.invalid,
    'An argument right after --json is read as its fields: put --json last, or write --json=FIELDS.',
  );
}
