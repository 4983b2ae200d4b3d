import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createApiClient, httpFailure } from '../../api/client.js';
import { resolveCredentials } from '../../auth/credentials.js';
import { CliError, EXIT, notSignedIn } from '../../errors.js';
import { createOutput, type Env, type Streams } from '../../output.js';
import { organizationId, sessionOf } from '../../resources/session.js';
import { createRateProgress } from './progress.js';
import { count } from '../../resources/words.js';

export interface IngestOptions {
  server?: string;
  json?: boolean;
  org?: string;
  batchSize?: string;
  concurrency?: string;
}

/** One event read from the input, with where it was (a line of NDJSON, an element of a JSON array). */
interface Located {
  event: Record<string, unknown>;
  where: string;
  /** Bytes of input read up to and including it (for the progress bar). */
  offset: number;
}

const DEFAULT_BATCH = 1000;
const DEFAULT_CONCURRENCY = 4;

function positive(flag: string, value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new CliError('INVALID_FLAG', `${flag} "${value}": expected a whole number from 1 to ${max}.`, EXIT.invalid);
  return n;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Reads events from NDJSON (one per line, blank lines skipped) or a JSON array, whichever the input holds. */
async function* readEvents(input: Readable): AsyncGenerator<Located> {
  let offset = 0;
  let lineNumber = 0;
  let array: string[] | undefined;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    lineNumber++;
    offset += Buffer.byteLength(line) + 1;
    if (array) {
      array.push(line);
      continue;
    }
    const text = line.trim();
    if (text === '') continue;
    if (text.startsWith('[')) {
      // A JSON array: read it whole (such files are small enough to be written as one document).
      array = [line];
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new CliError('INVALID_INPUT', `Line ${lineNumber} is not JSON: ${(error as Error).message}.`, EXIT.invalid, 'Give one JSON object per line (NDJSON), or a JSON array of events.');
    }
    if (!isRecord(parsed)) throw new CliError('INVALID_INPUT', `Line ${lineNumber} is not a JSON object.`, EXIT.invalid);
    yield { event: parsed, where: `Line ${lineNumber}`, offset };
  }
  if (!array) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(array.join('\n'));
  } catch (error) {
    throw new CliError('INVALID_INPUT', `The input is not a valid JSON array: ${(error as Error).message}.`, EXIT.invalid);
  }
  if (!Array.isArray(parsed)) throw new CliError('INVALID_INPUT', 'The input is not a JSON array.', EXIT.invalid);
  for (const [index, item] of parsed.entries()) {
    if (!isRecord(item)) throw new CliError('INVALID_INPUT', `Event ${index} of the array is not a JSON object.`, EXIT.invalid);
    yield { event: item, where: `Event ${index} of the array`, offset };
  }
}

interface Issue {
  loc?: unknown[];
  msg?: string;
}

/**
 * `till events ingest [FILE|-]`: sends the events of an NDJSON file (or a JSON array) in batches, a few batches
 * in flight at a time, with a progress bar and the rate on a terminal. A refused batch names the input line of the
 * event the server pointed at; batches before it stay ingested (send them again: external_id makes that safe).
 */
export async function ingestEvents(file: string | undefined, options: IngestOptions, env: Env, streams: Streams): Promise<number> {
  const out = createOutput(streams, env, options);
  const batchSize = positive('--batch-size', options.batchSize, DEFAULT_BATCH, 10_000);
  const concurrency = positive('--concurrency', options.concurrency, DEFAULT_CONCURRENCY, 16);
  const credentials = await resolveCredentials(env, options.server);
  const { server, token } = credentials;
  if (!token) throw notSignedIn(server);
  const api = createApiClient({ server });
  const org = await organizationId(sessionOf(env, streams, out, credentials), options.org);

  let input: Readable;
  let total: number | undefined;
  if (file === undefined || file === '-') {
    if (file === undefined && streams.stdin.isTTY) throw new CliError('MISSING_ARGUMENT', 'Give a file of events (NDJSON or a JSON array), or - to read them from stdin.', EXIT.usage);
    input = streams.stdin as unknown as Readable;
  } else {
    try {
      total = (await stat(file)).size;
    } catch (error) {
      throw new CliError('INVALID_ARGUMENT', `Cannot read ${file} (${(error as { code?: string }).code ?? String(error)}).`, EXIT.invalid);
    }
    input = createReadStream(file);
  }

  const progress = createRateProgress(streams.stderr, 'Ingesting', total, { enabled: !out.json });
  const result = { inserted: 0, duplicates: 0 };
  let sent = 0;
  let failure: { batch: number; error: CliError } | undefined;
  const inFlight = new Set<Promise<void>>();
  let batchNumber = 0;

  const send = (batch: Located[], number: number) => {
    const body = { events: batch.map((item) => (org && item.event.organization_id === undefined ? { ...item.event, organization_id: org } : item.event)) };
    const request = (async () => {
      const response = await api.send('POST', '/v1/events/ingest', { token, body });
      if (response.status === 200) {
        const answer = response.body as { inserted: number; duplicates: number };
        result.inserted += answer.inserted;
        result.duplicates += answer.duplicates;
        sent += batch.length;
        progress.update(sent, batch[batch.length - 1]!.offset);
        return;
      }
      let error = httpFailure(server, response);
      const issues = (response.body as { detail?: Issue[] } | null)?.detail;
      if (response.status === 422 && Array.isArray(issues) && issues[0]?.loc?.[2] !== undefined) {
        const [first] = issues;
        const index = Number(first!.loc![2]);
        const field = first!.loc!.slice(3).join('.');
        error = new CliError(
          'EVENT_REJECTED',
          `${batch[index]?.where ?? `Event ${index} of batch ${number}`} was refused: ${field ? `${field}: ` : ''}${first!.msg ?? 'invalid'}.`,
          EXIT.invalid,
          'Its batch was not ingested; batches before it were. Fix the event and run the command again: events with an external_id are not ingested twice.',
        );
      }
      if (!failure || number < failure.batch) failure = { batch: number, error };
    })();
    const tracked = request.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    return tracked;
  };

  let batch: Located[] = [];
  for await (const located of readEvents(input)) {
    if (failure) break;
    batch.push(located);
    if (batch.length === batchSize) {
      if (inFlight.size >= concurrency) await Promise.race(inFlight);
      void send(batch, batchNumber++);
      batch = [];
    }
  }
  if (batch.length && !failure) void send(batch, batchNumber++);
  await Promise.all(inFlight);
  progress.finish();
  if (failure) throw failure.error;

  out.result(result, (style) => `${style.green('✓')} Ingested ${count(sent, 'event')}: ${result.inserted.toLocaleString('en-US')} inserted, ${count(result.duplicates, 'duplicate')} (${progress.rate()}).`);
  return EXIT.ok;
}
