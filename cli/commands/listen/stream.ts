import type { IncomingMessage } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { httpFailure } from '../../api/client.js';
import { CliError, EXIT } from '../../errors.js';
import { CLI_VERSION } from '../../version.js';

export interface FollowOptions {
  /** The stream's URL (`…/v1/cli/listen/{organization_id}`). */
  url: string;
  token: string;
  /** Give up when no connection could be made for this long, in ms. */
  timeoutMs: number;
  /** A connection silent for this long (no event, no heartbeat) is taken for dead, in ms. */
  idleMs?: number;
  /** Each message, in order; the next waits until the promise settles. */
  onMessage(message: EventSourceMessage): Promise<void> | void;
  /** The stream is (again) open: `attempt` counts connections, 1 for the first. */
  onConnected?(attempt: number): void;
  /** The connection broke; a new one is being tried. */
  onDisconnected?(reason: string): void;
  /** Ends following (Ctrl-C). */
  signal: AbortSignal;
}

const DEFAULT_IDLE_MS = 45_000;
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5000;

type Outcome = { kind: 'dropped'; reason: string; connected: boolean } | { kind: 'aborted' };

/**
 * Follows a server-sent event stream over node:http: reconnects when the connection drops (sending
 * `Last-Event-ID`, so the server replays what was missed), stops on a refusal (401, 403, 404) and throws
 * SERVER_UNREACHABLE once no connection could be made for `timeoutMs`. Resolves when `signal` aborts.
 */
export async function follow(options: FollowOptions): Promise<void> {
  let lastEventId: string | undefined;
  let serverRetryMs: number | undefined;
  let failingSince: number | undefined;
  let delay = FIRST_DELAY_MS;
  let attempt = 0;
  // Messages are handled one at a time, in arrival order, across reconnects.
  let queue: Promise<void> = Promise.resolve();
  let failure: unknown;
  const enqueue = (message: EventSourceMessage) => {
    if (message.id) lastEventId = message.id;
    queue = queue.then(() => options.onMessage(message)).catch((error) => {
      failure ??= error;
    });
  };

  while (!options.signal.aborted) {
    const outcome = await connect(options, lastEventId, enqueue, (ms) => (serverRetryMs = ms), () => {
      attempt += 1;
      failingSince = undefined;
      delay = serverRetryMs ?? FIRST_DELAY_MS;
      options.onConnected?.(attempt);
    });
    if (failure) throw failure;
    if (outcome.kind === 'aborted') break;
    failingSince ??= Date.now();
    if (!outcome.connected && Date.now() - failingSince >= options.timeoutMs) {
      const origin = new URL(options.url).origin;
      throw new CliError(
        'SERVER_UNREACHABLE',
        `Lost the event stream from ${origin} and could not reconnect within ${Math.round(options.timeoutMs / 1000)} s (${outcome.reason}).`,
        EXIT.unreachable,
        'Is tilld running there? Restart `till listen` once it is, or raise --timeout.',
      );
    }
    options.onDisconnected?.(outcome.reason);
    await sleep(Math.min(delay, Math.max(0, options.timeoutMs - (Date.now() - failingSince))), options.signal);
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
  await queue;
  if (failure) throw failure;
}

function connect(
  options: FollowOptions,
  lastEventId: string | undefined,
  enqueue: (message: EventSourceMessage) => void,
  setRetry: (ms: number) => void,
  opened: () => void,
): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const url = new URL(options.url);
    const headers: Record<string, string> = {
      accept: 'text/event-stream',
      authorization: `Bearer ${options.token}`,
      'user-agent': `till-cli/${CLI_VERSION} (listen)`,
      'cache-control': 'no-cache',
    };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    let connected = false;
    let settled = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      options.signal.removeEventListener('abort', onAbort);
      req?.destroy();
      resolve(outcome);
    };
    const onAbort = () => finish({ kind: 'aborted' });
    options.signal.addEventListener('abort', onAbort);

    const load = url.protocol === 'https:' ? import('node:https') : import('node:http');
    let req: import('node:http').ClientRequest | undefined;
    void load.then(({ request }) => {
      const current = request(url, { method: 'GET', headers }, (res) => {
        if (res.statusCode !== 200) {
          void refusal(res, url.origin).then((error) => {
            if (error) {
              settled = true;
              options.signal.removeEventListener('abort', onAbort);
              reject(error);
            } else finish({ kind: 'dropped', reason: `HTTP ${res.statusCode}`, connected: false });
          });
          return;
        }
        connected = true;
        opened();
        const parser = createParser({ onEvent: enqueue, onRetry: setRetry });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          current.setTimeout(options.idleMs ?? DEFAULT_IDLE_MS);
          parser.feed(chunk);
        });
        res.on('end', () => finish({ kind: 'dropped', reason: 'the server closed the stream', connected }));
        res.on('error', (error) => finish({ kind: 'dropped', reason: error.message, connected }));
      });
      req = current;
      current.setTimeout(options.idleMs ?? DEFAULT_IDLE_MS, () => current.destroy(Object.assign(new Error('no data or heartbeat for too long'), { code: 'ETIMEDOUT' })));
      current.on('error', (error: NodeJS.ErrnoException) => finish({ kind: 'dropped', reason: error.code ?? error.message, connected }));
      current.end();
      if (options.signal.aborted) onAbort();
    });
  });
}

/** The error to stop with for a refused stream, or undefined when trying again may help (5xx, 429). */
async function refusal(res: IncomingMessage, origin: string): Promise<CliError | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const status = res.statusCode ?? 0;
  if (status >= 500 || status === 429) return undefined;
  let body: unknown = null;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    // not JSON: the status says enough
  }
  return httpFailure(origin, { status, headers: res.headers, body });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
