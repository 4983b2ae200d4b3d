import { CliError, EXIT } from '../errors.js';

/** A JSON value as `key:=json` gives it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * `key=value` (the value is a string) or `key:=json` (the value is JSON: a number, true, ["a","b"]), as httpie
 * writes them: `--metadata plan=pro --metadata seats:=5`.
 */
export function parsePair(raw: string, flag: string): [string, JsonValue] {
  const json = raw.indexOf(':=');
  const equals = raw.indexOf('=');
  if (json > 0 && json < equals) {
    const text = raw.slice(json + 2);
    try {
      return [raw.slice(0, json), JSON.parse(text) as JsonValue];
    } catch {
      throw new CliError('INVALID_FLAG', `${flag} ${JSON.stringify(raw)}: ${JSON.stringify(text)} is not JSON.`, EXIT.invalid, 'Use key=text for a string, key:=JSON for a number, boolean or list.');
    }
  }
  if (equals <= 0) throw new CliError('INVALID_FLAG', `${flag} ${JSON.stringify(raw)}: expected key=value.`, EXIT.invalid, 'Use key=text for a string, key:=JSON for a number, boolean or list.');
  return [raw.slice(0, equals), raw.slice(equals + 1)];
}

/** `--metadata` pairs as a metadata object: values are strings, numbers or booleans (Polar's metadata). */
export function parseMetadata(pairs: readonly string[]): Record<string, string | number | boolean> {
  const metadata: Record<string, string | number | boolean> = {};
  for (const raw of pairs) {
    const [key, value] = parsePair(raw, '--metadata');
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new CliError('INVALID_FLAG', `--metadata ${JSON.stringify(raw)}: a metadata value is a string, number or boolean.`, EXIT.invalid);
    }
    metadata[key] = value;
  }
  return metadata;
}

/** `--property` pairs as an object of JSON values. */
export function parseProperties(pairs: readonly string[], flag = '--property'): Record<string, JsonValue> {
  return Object.fromEntries(pairs.map((raw) => parsePair(raw, flag)));
}
