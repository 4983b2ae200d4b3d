import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError, EXIT } from '../errors.js';
import { createApiClient } from './client.js';

/** A stand-in server that answers each path with a fixed status, headers and body, and records requests. */
const routes: Record<string, { status: number; headers?: Record<string, string>; body?: string }> = {
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
};

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
        const route = routes[req.url ?? ''] ?? { status: 404, body: '' };
        res.writeHead(route.status, { 'content-type': 'application/json', ...route.headers });
        res.end(route.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const failure = (path: string) =>
    createApiClient({ server: url })
      .get(path)
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
    expect(error).toMatchObject({ code: 'SERVER_ERROR', exitCode: EXIT.serverError, hint: 'The server logged it as request req-123.' });
    expect(error.message).toBe(`${url} failed with HTTP 500: Internal server error.`);
    expect(await failure('/gateway')).toMatchObject({ code: 'SERVER_ERROR', exitCode: EXIT.serverError });
  });

  it('resolves any status through send(), for callers that read error bodies', async () => {
    const response = await createApiClient({ server: url }).send('GET', '/invalid');
    expect(response).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });

  it('maps a server that does not answer in time to SERVER_UNREACHABLE (exit 8)', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const api = createApiClient({ server: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, timeoutMs: 200 });
      await expect(api.get('/anything')).rejects.toMatchObject({ code: 'SERVER_UNREACHABLE', exitCode: EXIT.unreachable, message: expect.stringContaining('timed out') });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
