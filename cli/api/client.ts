import { randomUUID } from 'node:crypto';
import { CliError, EXIT } from '../errors.js';
import { CLI_VERSION } from '../version.js';
import { DEFAULT_RETRY, delayAfterStatus, isTransientError, mayRepeat, parseRetryAfter, retryFromEnv, type RetryPolicy } from './retry.js';

/*
 * The one way the CLI talks HTTP, on node:http(s). Measured on this project (Node 20, hyperfine, one
 * GET /api/auth/get-session against a local tilld, CPU time over `node -e 0`): node:http +20 ms,
 * global fetch +130 ms, undici's request +175 ms. fetch and undici compile their WebAssembly HTTP
 * parser on first use, which alone would put `till whoami` over its start-up budget.
 */

export interface ApiResponse {
  status: number;
  /** Response headers, lower-cased names. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Parsed JSON, or null for an empty body. */
  body: unknown;
  /** How many tries it took (more than 1 after a 429, a 5xx or a broken connection). */
  attempts?: number;
}

export interface RequestOptions {
  body?: unknown;
  /** Session token sent as `Authorization: Bearer …`. */
  token?: string;
  /**
   * Sent as `Idempotency-Key`; it lets a POST or PATCH be retried like an idempotent request. Writes to /v1 get
   * a random one when none is given.
   */
  idempotencyKey?: string;
}

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface ApiClient {
  readonly server: string;
  /**
   * Resolves with any HTTP status (the last try's); only network failures throw. For callers that read
   * error bodies. Idempotent requests are retried on 429, 5xx and connection failures (cli/api/retry.ts).
   */
  send(method: HttpMethod, path: string, options?: RequestOptions): Promise<ApiResponse>;
  /** Throws the CliError matching the status for anything but 2xx. */
  get<T = unknown>(path: string, options?: RequestOptions): Promise<T>;
  post<T = unknown>(path: string, body?: unknown, options?: RequestOptions): Promise<T>;
}

export interface ApiClientOptions {
  /** Normalized server URL, no trailing slash. */
  server: string;
  /** Per try. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Waits between tries; tests pass one that does not. */
  sleep?: (ms: number) => Promise<void>;
  /** Where each retry is announced; by default stderr when TILL_DEBUG is set, else nowhere. */
  debug?: (line: string) => void;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An HTTP client for one server; failures become CliErrors carrying the matching exit code. */
export function createApiClient({ server, timeoutMs = DEFAULT_TIMEOUT_MS, retry, sleep = wait, debug = debugFromEnv() }: ApiClientOptions): ApiClient {
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...retryFromEnv(), ...retry };
  const send: ApiClient['send'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': `till-cli/${CLI_VERSION}` };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    // Every /v1 write carries a key, the same on each try, so a retry after a lost answer is recognised as a repeat.
    const idempotencyKey = options.idempotencyKey ?? (KEYED_WRITES.has(method) && path.startsWith('/v1/') ? randomUUID() : undefined);
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const url = new URL(`${server}${path}`);
    // https (and so TLS) is loaded only for an https server.
    const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
    const attempts = mayRepeat(method, idempotencyKey) ? Math.max(1, policy.attempts) : 1;
    for (let attempt = 1; ; attempt++) {
      let raw: RawResponse;
      try {
        raw = await exchange(request, url, { method, headers }, payload, timeoutMs);
      } catch (error) {
        if (attempt < attempts && isTransientError(error)) {
          debug?.(`till: ${method} ${url.href} failed (${reasonOf(error)}); try ${attempt + 1} of ${attempts} in ${policy.delayMs} ms`);
          await sleep(policy.delayMs);
          continue;
        }
        throw unreachable(server, error, attempt);
      }
      const delay =
        attempt >= attempts ? undefined
        : keyStillRunning(raw) ? policy.delayMs
        : delayAfterStatus(raw.status, header(raw, 'retry-after') ?? header(raw, 'x-retry-after'), policy);
      if (delay !== undefined) {
        debug?.(`till: ${method} ${url.href} answered HTTP ${raw.status}; try ${attempt + 1} of ${attempts} in ${delay} ms`);
        await sleep(delay);
        continue;
      }
      return { status: raw.status, headers: raw.headers, body: parseBody(server, raw.status, raw.text), attempts: attempt };
    }
  };
  const call = async <T>(method: HttpMethod, path: string, options?: RequestOptions): Promise<T> => {
    const response = await send(method, path, options);
    if (response.status < 200 || response.status > 299) throw httpFailure(server, response);
    return response.body as T;
  };
  return {
    server,
    send,
    get: (path, options) => call('GET', path, options),
    post: (path, body, options) => call('POST', path, { ...options, body: body ?? {} }),
  };
}

/** Writes that get a generated Idempotency-Key when the caller gave none. */
const KEYED_WRITES = new Set<HttpMethod>(['POST', 'PATCH', 'DELETE']);

/** tilld's 409 for a repeat while the first try of the same key still runs: worth waiting for, like a 503. */
const keyStillRunning = (raw: RawResponse) => raw.status === 409 && raw.text.includes('"IDEMPOTENCY_KEY_IN_USE"');

interface RawResponse {
  status: number;
  headers: ApiResponse['headers'];
  text: string;
}

/** One try: sends the request and reads the whole answer, or fails after timeoutMs of silence. */
function exchange(
  request: typeof import('node:http').request,
  url: URL,
  options: { method: string; headers: Record<string, string> },
  payload: Buffer | undefined,
  timeoutMs: number,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(payload);
  });
}

function parseBody(server: string, status: number, text: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    // An error page from a proxy is still an HTTP failure worth reporting by its status.
    if (status >= 400) return { message: text.slice(0, 200) };
    throw new CliError('BAD_RESPONSE', `${server} answered with something that is not JSON.`, EXIT.serverError, 'Check that --server / TILL_SERVER points at tilld.');
  }
}

/** The code and message of an error body, whichever of the server's three shapes it has. */
export function describeErrorBody(body: unknown): { code?: string; message?: string } {
  if (!body || typeof body !== 'object') return {};
  const record = body as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  return {
    // Better Auth: {code, message}; OAuth endpoints: {error, error_description}; tilld: {error, detail}.
    code: text(record.code) ?? text(record.error),
    message: text(record.message) ?? text(record.error_description) ?? text(record.detail),
  };
}

/** Maps an HTTP failure to the error, and so the exit code, the user sees. */
export function httpFailure(server: string, response: ApiResponse): CliError {
  const { status } = response;
  const described = describeErrorBody(response.body);
  // One style for every code the CLI shows: ResourceNotFound, invalid_request → RESOURCE_NOT_FOUND, INVALID_REQUEST.
  const code = described.code?.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
  const message = described.message;
  if (status === 401) {
    return new CliError(code ?? 'UNAUTHORIZED', message ?? `${server} did not accept your credentials.`, EXIT.notSignedIn, 'Run `till login` to sign in.');
  }
  if (status === 403) return new CliError(code ?? 'FORBIDDEN', message ?? 'You are not allowed to do that.', EXIT.error);
  if (status === 404) return new CliError(code ?? 'NOT_FOUND', message ?? 'Not found.', EXIT.notFound);
  if (status === 429) {
    const retryAfter = parseRetryAfter(header(response, 'retry-after') ?? header(response, 'x-retry-after'));
    const when = retryAfter !== undefined ? `Try again in ${Math.ceil(retryAfter / 1000)} s.` : 'Wait a minute and try again.';
    return new CliError('RATE_LIMITED', message ?? 'Too many requests.', EXIT.rateLimited, [tries(response.attempts), when].filter(Boolean).join(' '));
  }
  if (status >= 500) {
    const requestId = (response.body as { request_id?: unknown } | null)?.request_id;
    return new CliError(
      'SERVER_ERROR',
      `${server} failed with HTTP ${status}${message ? `: ${message}` : ''}.`,
      EXIT.serverError,
      [typeof requestId === 'string' ? `The server logged it as request ${requestId}.` : undefined, tries(response.attempts)].filter(Boolean).join(' ') || undefined,
    );
  }
  // A declined payment is not invalid input: the same request with another card (token) succeeds.
  if (code === 'CHECKOUT_PAYMENT_DECLINED') return new CliError(code, message ?? 'The payment was declined.', EXIT.error);
  if (status === 400 || status === 409 || status === 413 || status === 422) {
    return new CliError(code ?? 'INVALID_INPUT', message ?? `${server} rejected the request (HTTP ${status}).`, EXIT.invalid);
  }
  return new CliError(code ?? 'HTTP_ERROR', message ?? `${server} answered HTTP ${status}.`, EXIT.error);
}

/** Says that a failure is not a one-off: the request was tried again, to no avail. */
const tries = (attempts = 1) => (attempts > 1 ? `Tried ${attempts} times.` : undefined);

function header(response: { headers: ApiResponse['headers'] }, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** TILL_DEBUG (any non-empty value) shows each retry on stderr, so a slow command says why it is slow. */
function debugFromEnv(env: Record<string, string | undefined> = process.env): ((line: string) => void) | undefined {
  return env.TILL_DEBUG ? (line) => void process.stderr.write(`${line}\n`) : undefined;
}

const REASONS: Record<string, string> = {
  ETIMEDOUT: 'timed out',
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset',
};

function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return REASONS[code] ? `${REASONS[code]}, ${code}` : code;
  return error instanceof Error ? error.message : String(error);
}

function unreachable(server: string, error: unknown, attempts: number): CliError {
  const reason = (error as { code?: unknown } | null)?.code === 'ETIMEDOUT' ? 'timed out' : reasonOf(error);
  return new CliError(
    'SERVER_UNREACHABLE',
    `Cannot reach ${server} (${reason}).`,
    EXIT.unreachable,
    [tries(attempts), 'Is tilld running there? Start it with `tilld`, or point --server / TILL_SERVER at it.'].filter(Boolean).join(' '),
  );
}
