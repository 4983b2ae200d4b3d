import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pollDeviceToken } from '../auth/device-api.js';
import { CliError, EXIT } from '../errors.js';
import { createApiClient, type ApiClientOptions } from './client.js';
import { parseRetryAfter } from './retry.js';

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Drop the connection instead of answering (ECONNRESET on the client). */
  reset?: boolean;
}

/**
 * A stand-in server that answers each path with a fixed status, headers and body, and records requests.
 * Answers queued for a path (`script`) come first, one per request.
 */
const routes: Record<string, Answer> = {
  '/ok': { status: 200, body: '{"hello":"world"}' },
  '/empty': { status: 200, body: '' },
  '/html': { status: 200, body: '<html>not tilld</html>' },
  '/unauthorized': { status: 401, body: '{"code":"UNAUTHORIZED","message":"Sign in first"}' },
  '/missing': { status: 404, body: '{"error":"ResourceNotFound","detail":"No route for GET /missing"}' },
  '/invalid': { status: 400, body: '{"error":"invalid_request","error_description":"client_id is required"}' },
  '/conflict': { status: 409, body: '{"error":"ALREADY_EXISTS","detail":"Already there"}' },
  '/limited': { status: 429, headers: { 'x-retry-after': '42' }, body: '{"message":"Too many requests. Please try again later."}' },
  '/broken': { status: 500, body: '{"error":"INTERNAL_SERVER_ERROR","detail":"Internal server error","request_id":"req-123"}' },
  '/gateway': { status: 502, body: '<html>Bad gateway</html>' },
  '/unprocessable': { status: 422, body: '{"error":"VALIDATION_ERROR","detail":"Bad name"}' },
};
const queued: Record<string, Answer[]> = {};
const script = (path: string, ...answers: Answer[]) => (queued[path] = answers);
const unavailable: Answer = { status: 503, body: '{"error":"UNAVAILABLE","detail":"Try later"}' };
const ok: Answer = { status: 200, body: '{"done":true}' };

describe('createApiClient', () => {
  let server: Server;
  let url: string;
  const seen: { method?: string; url?: string; headers: Record<string, unknown>; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        const route = queued[req.url ?? '']?.shift() ?? routes[req.url ?? ''] ?? { status: 404, body: '' };
        if (route.reset) return void req.socket.destroy();
        res.writeHead(route.status, { 'content-type': 'application/json', ...route.headers });
        res.end(route.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    seen.length = 0;
    for (const path of Object.keys(queued)) delete queued[path];
  });

  /** A client whose waits between tries are recorded instead of slept. */
  const clientWithoutWaiting = (options: Partial<ApiClientOptions> = {}) => {
    const waits: number[] = [];
    const api = createApiClient({ server: url, sleep: async (ms) => void waits.push(ms), ...options });
    return { api, waits };
  };
  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected a failure');
      },
      (error: unknown) => error as CliError,
    );
  const requestsTo = (path: string) => seen.filter((request) => request.url === path).length;

  const failure = (path: string) =>
    clientWithoutWaiting()
      .api.get(path)
      .then(
        () => {
          throw new Error('expected a failure');
        },
        (error: unknown) => error as CliError,
      );

  it('sends JSON with the bearer token and parses the JSON answer', async () => {
    const api = createApiClient({ server: url });
    await expect(api.post('/ok', { a: 1 }, { token: 'tok' })).resolves.toEqual({ hello: 'world' });
    const request = seen.at(-1)!;
    expect(request).toMatchObject({ method: 'POST', url: '/ok', body: '{"a":1}' });
    expect(request.headers).toMatchObject({ authorization: 'Bearer tok', 'content-type': 'application/json' });
    expect(request.headers['user-agent']).toMatch(/^till-cli\//);
  });

  it('reads an empty body as null', async () => {
    await expect(createApiClient({ server: url }).get('/empty')).resolves.toBeNull();
  });

  it('refuses a 2xx answer that is not JSON with BAD_RESPONSE (exit 7)', async () => {
    expect(await failure('/html')).toMatchObject({ code: 'BAD_RESPONSE', exitCode: EXIT.serverError });
  });

  it('maps 401 to exit 3, keeping the server code and message', async () => {
    expect(await failure('/unauthorized')).toMatchObject({ code: 'UNAUTHORIZED', message: 'Sign in first', exitCode: EXIT.notSignedIn });
  });

  it('maps 404 to exit 4', async () => {
    expect(await failure('/missing')).toMatchObject({ code: 'RESOURCE_NOT_FOUND', exitCode: EXIT.notFound });
  });

  it('maps 400 and 409 to exit 5 with the server message, whichever error shape it uses', async () => {
    expect(await failure('/invalid')).toMatchObject({ code: 'INVALID_REQUEST', message: 'client_id is required', exitCode: EXIT.invalid });
    expect(await failure('/conflict')).toMatchObject({ code: 'ALREADY_EXISTS', message: 'Already there', exitCode: EXIT.invalid });
  });

  it('maps 429 to exit 6 and says when to retry', async () => {
    expect(await failure('/limited')).toMatchObject({ code: 'RATE_LIMITED', exitCode: EXIT.rateLimited, hint: 'Try again in 42 s.' });
  });

  it('maps 5xx to exit 7 and passes on the request id the server logged', async () => {
    const error = await failure('/broken');
    expect(error).toMatchObject({ code: 'SERVER_ERROR', exitCode: EXIT.serverError, hint: 'The server logged it as request req-123. Tried 3 times.' });
    expect(error.message).toBe(`${url} failed with HTTP 500: Internal server error.`);
    expect(await failure('/gateway')).toMatchObject({ code: 'SERVER_ERROR', exitCode: EXIT.serverError });
  });

  it('resolves any status through send(), for callers that read error bodies', async () => {
    const response = await createApiClient({ server: url }).send('GET', '/invalid');
    expect(response).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });

  it('maps a server that does not answer in time, try after try, to SERVER_UNREACHABLE (exit 8)', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const waits: number[] = [];
      const api = createApiClient({ server: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, timeoutMs: 200, sleep: async (ms) => void waits.push(ms) });
      await expect(api.get('/anything')).rejects.toMatchObject({ code: 'SERVER_UNREACHABLE', exitCode: EXIT.unreachable, message: expect.stringContaining('timed out') });
      // Each try has its own timeout, and a timeout is retried like a refused connection.
      expect(waits).toEqual([1000, 1000]);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  describe('retries (linear, 1000 ms apart, 3 tries in all)', () => {
    it('retries a 503 and returns the answer that follows', async () => {
      script('/flaky', unavailable, ok);
      const { api, waits } = clientWithoutWaiting();
      await expect(api.get('/flaky')).resolves.toEqual({ done: true });
      expect(requestsTo('/flaky')).toBe(2);
      expect(waits).toEqual([1000]);
    });

    it('really waits about a second between two tries', async () => {
      script('/flaky', unavailable, ok);
      const started = performance.now();
      await expect(createApiClient({ server: url }).get('/flaky')).resolves.toEqual({ done: true });
      const elapsed = performance.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(950);
      expect(elapsed).toBeLessThan(5000);
    });

    it('gives up after 3 tries, 1000 ms apart, with SERVER_ERROR (exit 7) saying so', async () => {
      script('/down', unavailable, unavailable, unavailable, ok);
      const { api, waits } = clientWithoutWaiting();
      const error = await rejection(api.get('/down'));
      expect(error).toMatchObject({ code: 'SERVER_ERROR', exitCode: EXIT.serverError, hint: 'Tried 3 times.' });
      expect(error.message).toBe(`${url} failed with HTTP 503: Try later.`);
      expect(requestsTo('/down')).toBe(3);
      expect(waits).toEqual([1000, 1000]);
    });

    it('takes the number of tries from its options; 1 turns retrying off', async () => {
      script('/down', unavailable, unavailable, ok);
      const { api, waits } = clientWithoutWaiting({ retry: { attempts: 1 } });
      expect(await rejection(api.get('/down'))).toMatchObject({ code: 'SERVER_ERROR', hint: undefined });
      expect(requestsTo('/down')).toBe(1);
      expect(waits).toEqual([]);
    });

    it('fails at once on a refused connection with SERVER_UNREACHABLE (exit 8), naming the URL and --server / TILL_SERVER', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const waits: number[] = [];
      const api = createApiClient({ server: `http://127.0.0.1:${port}`, sleep: async (ms) => void waits.push(ms) });
      const error = await rejection(api.get('/anything'));
      expect(error).toMatchObject({ code: 'SERVER_UNREACHABLE', exitCode: EXIT.unreachable, message: `Cannot reach http://127.0.0.1:${port} (connection refused, ECONNREFUSED).` });
      expect(error.hint).toBe('Is tilld running there? Start it with `tilld`, or point --server / TILL_SERVER at it.');
      // Nothing listens there, and a second later nothing will either.
      expect(waits).toEqual([]);
    });

    it('fails at once on a host name that does not resolve', async () => {
      const waits: number[] = [];
      const api = createApiClient({ server: 'http://till-no-such-host.invalid', sleep: async (ms) => void waits.push(ms) });
      const error = await rejection(api.get('/anything'));
      expect(error).toMatchObject({ code: 'SERVER_UNREACHABLE', exitCode: EXIT.unreachable });
      expect(error.message).toMatch(/^Cannot reach http:\/\/till-no-such-host\.invalid \(/);
      expect(waits).toEqual([]);
    });

    it('announces each retry through its debug sink (TILL_DEBUG), with the status and the try number', async () => {
      script('/flaky', unavailable, unavailable, ok);
      const lines: string[] = [];
      const { api } = clientWithoutWaiting({ debug: (line) => lines.push(line) });
      await expect(api.get('/flaky')).resolves.toEqual({ done: true });
      expect(lines).toEqual([
        `till: GET ${url}/flaky answered HTTP 503; try 2 of 3 in 1000 ms`,
        `till: GET ${url}/flaky answered HTTP 503; try 3 of 3 in 1000 ms`,
      ]);
    });

    it('retries a connection the server dropped and returns the answer that follows', async () => {
      script('/dropped', { status: 0, reset: true }, ok);
      const { api, waits } = clientWithoutWaiting();
      await expect(api.get('/dropped')).resolves.toEqual({ done: true });
      expect(requestsTo('/dropped')).toBe(2);
      expect(waits).toEqual([1000]);
    });

    it('retries PUT and DELETE like GET', async () => {
      script('/flaky', unavailable, ok, unavailable, ok);
      const { api } = clientWithoutWaiting();
      expect(await api.send('PUT', '/flaky', { body: {} })).toMatchObject({ status: 200, attempts: 2 });
      expect(await api.send('DELETE', '/flaky')).toMatchObject({ status: 200, attempts: 2 });
    });

    it('does not retry a POST or PATCH without an Idempotency-Key', async () => {
      script('/write', unavailable, unavailable, ok);
      const { api, waits } = clientWithoutWaiting();
      expect(await rejection(api.post('/write', { a: 1 }))).toMatchObject({ code: 'SERVER_ERROR', exitCode: EXIT.serverError, hint: undefined });
      expect(await api.send('PATCH', '/write', { body: { a: 1 } })).toMatchObject({ status: 503, attempts: 1 });
      expect(requestsTo('/write')).toBe(2);
      expect(waits).toEqual([]);
      expect(seen[0]!.headers['idempotency-key']).toBeUndefined();
    });

    it('does not retry a refused POST without an Idempotency-Key', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const waits: number[] = [];
      const api = createApiClient({ server: `http://127.0.0.1:${port}`, sleep: async (ms) => void waits.push(ms) });
      expect(await rejection(api.post('/write', {}))).toMatchObject({ code: 'SERVER_UNREACHABLE', exitCode: EXIT.unreachable });
      expect(waits).toEqual([]);
    });

    it('retries a POST that carries an Idempotency-Key, sending the same key and body each time', async () => {
      script('/write', unavailable, unavailable, ok);
      const { api, waits } = clientWithoutWaiting();
      await expect(api.post('/write', { a: 1 }, { idempotencyKey: 'key-123' })).resolves.toEqual({ done: true });
      const writes = seen.filter((request) => request.url === '/write');
      expect(writes).toHaveLength(3);
      for (const write of writes) {
        expect(write).toMatchObject({ method: 'POST', body: '{"a":1}' });
        expect(write.headers['idempotency-key']).toBe('key-123');
      }
      expect(waits).toEqual([1000, 1000]);
    });

    it('sends a generated Idempotency-Key on every /v1 write and the same key on each retry', async () => {
      script('/v1/products/', unavailable, ok, ok);
      const { api, waits } = clientWithoutWaiting();
      await expect(api.post('/v1/products/', { name: 'Book' })).resolves.toEqual({ done: true });
      await expect(api.post('/v1/products/', { name: 'Book' })).resolves.toEqual({ done: true });
      const keys = seen.filter((request) => request.url === '/v1/products/').map((request) => request.headers['idempotency-key']);
      expect(keys).toHaveLength(3);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(keys[1]).toBe(keys[0]);
      expect(keys[2]).not.toBe(keys[0]);
      expect(waits).toEqual([1000]);
    });

    it('waits and retries a 409 saying the same key is still running, but not another 409', async () => {
      script('/v1/refunds/', { status: 409, body: '{"error":"Conflict","code":"IDEMPOTENCY_KEY_IN_USE","detail":"still running"}' }, ok);
      const { api, waits } = clientWithoutWaiting();
      await expect(api.post('/v1/refunds/', { amount: 1 }, { idempotencyKey: 'refund-1' })).resolves.toEqual({ done: true });
      expect(waits).toEqual([1000]);
      expect(await rejection(api.post('/conflict', {}, { idempotencyKey: 'other' }))).toMatchObject({ exitCode: EXIT.invalid });
      expect(waits).toEqual([1000]);
    });

    it('does not retry 400, 401, 404 or 422', async () => {
      const { api, waits } = clientWithoutWaiting();
      expect(await rejection(api.get('/invalid'))).toMatchObject({ exitCode: EXIT.invalid });
      expect(await rejection(api.get('/unauthorized'))).toMatchObject({ exitCode: EXIT.notSignedIn });
      expect(await rejection(api.get('/missing'))).toMatchObject({ exitCode: EXIT.notFound });
      expect(await rejection(api.get('/unprocessable'))).toMatchObject({ code: 'VALIDATION_ERROR', exitCode: EXIT.invalid });
      expect(seen.map((request) => request.url)).toEqual(['/invalid', '/unauthorized', '/missing', '/unprocessable']);
      expect(waits).toEqual([]);
    });

    it('waits as long as Retry-After asks on a 429, then returns the answer that follows', async () => {
      script('/busy', { status: 429, headers: { 'retry-after': '3' }, body: '{}' }, ok);
      const { api, waits } = clientWithoutWaiting();
      await expect(api.get('/busy')).resolves.toEqual({ done: true });
      expect(waits).toEqual([3000]);
    });

    it("reads Better Auth's X-Retry-After, and waits at least the linear second", async () => {
      script('/busy', { status: 429, headers: { 'x-retry-after': '2' }, body: '{}' }, { status: 429, headers: { 'x-retry-after': '0' }, body: '{}' }, ok);
      const { api, waits } = clientWithoutWaiting();
      await expect(api.get('/busy')).resolves.toEqual({ done: true });
      expect(waits).toEqual([2000, 1000]);
    });

    it('gives up on a 429 after 3 tries with RATE_LIMITED (exit 6), saying when to try again', async () => {
      const limited: Answer = { status: 429, headers: { 'retry-after': '5' }, body: '{"message":"Slow down"}' };
      script('/busy', limited, limited, limited, ok);
      const { api, waits } = clientWithoutWaiting();
      expect(await rejection(api.get('/busy'))).toMatchObject({ code: 'RATE_LIMITED', exitCode: EXIT.rateLimited, message: 'Slow down', hint: 'Tried 3 times. Try again in 5 s.' });
      expect(waits).toEqual([5000, 5000]);
    });

    it('fails a 429 at once when Retry-After asks for more than 10 s', async () => {
      const { api, waits } = clientWithoutWaiting();
      expect(await rejection(api.get('/limited'))).toMatchObject({ code: 'RATE_LIMITED', exitCode: EXIT.rateLimited, hint: 'Try again in 42 s.' });
      expect(requestsTo('/limited')).toBe(1);
      expect(waits).toEqual([]);
    });

    it('reads Retry-After as seconds or as an HTTP date', () => {
      const now = Date.parse('2026-11-23T10:00:00Z');
      expect(parseRetryAfter('7', now)).toBe(7000);
      expect(parseRetryAfter('Mon, 23 Nov 2026 10:00:04 GMT', now)).toBe(4000);
      expect(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', now)).toBe(0);
      expect(parseRetryAfter('soon', now)).toBeUndefined();
      expect(parseRetryAfter(undefined, now)).toBeUndefined();
    });

    it('never retries the device-login poll, which keeps its own RFC 8628 timing', async () => {
      script('/api/auth/device/token', unavailable, ok);
      const { api, waits } = clientWithoutWaiting();
      expect(await rejection(pollDeviceToken(api, 'device-code'))).toMatchObject({ code: 'SERVER_ERROR', exitCode: EXIT.serverError });
      script('/api/auth/device/token', { status: 429, body: '{}' }, ok);
      await expect(pollDeviceToken(api, 'device-code')).resolves.toEqual({ kind: 'slow_down' });
      expect(requestsTo('/api/auth/device/token')).toBe(2);
      expect(waits).toEqual([]);
    });
  });
});
