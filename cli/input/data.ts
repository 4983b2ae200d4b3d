import { readFile } from 'node:fs/promises';
import { CliError, EXIT } from '../errors.js';

/** A request body under construction: JSON object fields by wire (snake_case) name. */
export type Body = Record<string, unknown>;

const HINT = 'Give --data @file.json, --data - (JSON on stdin) or --data \'{"name":"…"}\'.';

/**
 * The body `--data` names: `@path` reads a file, `-` reads stdin to its end, anything else is JSON itself.
 * It must be a JSON object; flags given with it override its fields.
 */
export async function readData(raw: string, stdin: unknown): Promise<Body> {
  let text: string;
  let source: string;
  if (raw === '-') {
    source = 'stdin';
    text = await readAll(stdin);
  } else if (raw.startsWith('@')) {
    source = raw.slice(1);
    try {
      text = await readFile(source, 'utf8');
    } catch (error) {
      const reason = (error as { code?: string }).code === 'ENOENT' ? 'no such file' : error instanceof Error ? error.message : String(error);
      throw new CliError('INVALID_FLAG', `--data: cannot read ${source} (${reason}).`, EXIT.invalid, HINT);
    }
  } else {
    source = 'the --data value';
    text = raw;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError('INVALID_FLAG', `--data: ${source} is not JSON (${error instanceof Error ? error.message : String(error)}).`, EXIT.invalid, HINT);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError('INVALID_FLAG', `--data: ${source} must hold a JSON object.`, EXIT.invalid, HINT);
  }
  return value as Body;
}

async function readAll(stdin: unknown): Promise<string> {
  const stream = (stdin && typeof stdin === 'object' && Symbol.asyncIterator in stdin ? stdin : process.stdin) as AsyncIterable<Buffer | string>;
  if ((stream as { isTTY?: boolean }).isTTY) {
    throw new CliError('INVALID_FLAG', '--data -: stdin is a terminal, not JSON piped in.', EXIT.invalid, HINT);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
