import { createServer, type RequestListener, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, createRequestListener, type AppDeps } from '../../app.js';
import { createLogger } from '../../logger.js';
import { signUp, type SignedIn } from '../../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../../testing/daemon.js';
import { createOrganization, v1Json } from '../../testing/v1.js';
import type { HotReadsListener } from './hot-reads.js';

// Two servers on the same database and auth: the app alone (Express answers everything) and tilld's listener, whose
// hot lane answers the two reads. Every request is sent to both, and the bytes that come back must be the same.
let daemon: TestDaemon;
let owner: SignedIn;
let express: { server: Server; port: number; logs: Record<string, unknown>[] };
let hot: { server: Server; port: number; logs: Record<string, unknown>[] };
let listener: HotReadsListener;
let token: string;
let customersOnlyToken: string;
let productId: string;
let customerId: string;
let strangerProductId: string;

async function serve(make: (deps: AppDeps) => RequestListener) {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const server = createServer(make({ db: daemon.db, auth: daemon.auth, logger: createLogger('info', sink), baseUrl: daemon.baseUrl, version: 'test', bodyLimit: 1_000_000 }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, logs };
}

/** The raw bytes of one answer (the server closes the connection after it: Connection: close), its Date line taken out. */
const raw = (port: number, request: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let bytes = '';
    socket.on('data', (chunk) => (bytes += chunk));
    socket.on('end', () => resolve(bytes.replace(/^Date: .*\r\n/m, '')));
    socket.on('error', reject);
  });

const request = (method: string, path: string, headers: Record<string, string>, body = '') =>
  `${method} ${path} HTTP/1.1\r\nHost: till.test\r\nConnection: close\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`;

/** Sends the request to both servers; expects the same bytes and the same log line, and answers the bytes. */
async function same(method: string, path: string, headers: Record<string, string> = {}, body = '') {
  const sent = request(method, path, { 'X-Request-Id': `same-${Math.random().toString(36).slice(2)}`, ...headers }, body);
  const expressLogs = express.logs.length;
  const hotLogs = hot.logs.length;
  const [fromExpress, fromHot] = [await raw(express.port, sent), await raw(hot.port, sent)];
  expect(fromHot).toBe(fromExpress);
  // The log line comes as the response finishes: wait for both.
  for (let i = 0; i < 100 && (express.logs.length === expressLogs || hot.logs.length === hotLogs); i++) await new Promise((r) => setTimeout(r, 10));
  const lines = (logs: Record<string, unknown>[], from: number) => logs.slice(from).map(({ time: _time, pid: _pid, hostname: _host, responseTime, ...line }) => ({ ...line, responseTime: typeof responseTime }));
  expect(lines(hot.logs, hotLogs)).toEqual(lines(express.logs, expressLogs));
  expect(lines(hot.logs, hotLogs)).toHaveLength(1);
  return fromHot;
}

const bearer = (value: string) => ({ Authorization: `Bearer ${value}` });

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Hattie Hot' });
  const organizationId = await createOrganization(owner, 'Hot Reads');
  const post = <T = any>(path: string, body: unknown, as = owner.token) => v1Json<T>(daemon.url, as, 'POST', path, body);
  const benefit = await post('/benefits/', { organization_id: organizationId, type: 'custom', description: 'Support', properties: { note: 'Write to us' } });
  const product = await post('/products/', { organization_id: organizationId, name: 'Pro', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }], metadata: { tier: 'pro' } });
  await post(`/products/${product.id}/benefits`, { benefits: [benefit.id] });
  const plan = await post('/products/', { organization_id: organizationId, name: 'Free', recurring_interval: 'month', prices: [{ amount_type: 'free' }] });
  await post(`/products/${plan.id}/benefits`, { benefits: [benefit.id] });
  const customer = await post('/customers/', { organization_id: organizationId, email: 'hot@reads.example', name: 'Hot', external_id: 'hot-1' });
  await post('/subscriptions/', { product_id: plan.id, customer_id: customer.id });
  productId = product.id;
  customerId = customer.id;
  token = (await post('/organization-access-tokens', { organization_id: organizationId, comment: 'hot', scopes: ['products:read', 'customers:read'] })).token;
  customersOnlyToken = (await post('/organization-access-tokens', { organization_id: organizationId, comment: 'customers', scopes: ['customers:read'] })).token;
  const stranger = await signUp(daemon.url, { name: 'Stan Stranger' });
  const strangerOrganization = await createOrganization(stranger, 'Elsewhere');
  strangerProductId = (await post('/products/', { organization_id: strangerOrganization, name: 'Theirs', prices: [{ amount_type: 'free' }] }, stranger.token)).id;
  express = await serve(createApp);
  hot = await serve((deps) => (listener = createRequestListener(deps)));
});
afterAll(async () => {
  await Promise.all([express, hot].map((s) => s && new Promise((resolve) => s.server.close(resolve))));
  await daemon?.close();
});

describe('the hot lane of GET /v1/products/{id} and GET /v1/customers/{id}/state', () => {
  it('refuses a request without credentials as Express does', async () => {
    const answer = await same('GET', `/v1/products/${productId}`);
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('answers a product with the bytes Express answers, and answers it itself', async () => {
    const before = listener.answered;
    const answer = await same('GET', `/v1/products/${productId}`, bearer(token));
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toContain('Content-Security-Policy: ');
    expect(answer).toContain(`"id":"${productId}"`);
    expect(listener.answered).toBe(before + 1);
  });

  it("answers a customer's state with the bytes Express answers, in either Polar-Version, and answers it itself", async () => {
    const before = listener.answered;
    const answer = await same('GET', `/v1/customers/${customerId}/state`, bearer(token));
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toContain('"active_subscriptions":[{');
    expect(await same('GET', `/v1/customers/${customerId}/state`, { ...bearer(token), 'Polar-Version': '2026-10' })).toContain('Polar-Version: 2026-10\r\n');
    expect(await same('GET', `/v1/products/${productId}`, { ...bearer(token), 'Polar-Version': ' 2026-04 ' })).toContain('Polar-Version: 2026-04\r\n');
    expect(listener.answered).toBe(before + 3);
  });

  it('gives a request without X-Request-Id a fresh id, as Express does', async () => {
    const sent = request('GET', `/v1/products/${productId}`, bearer(token));
    const [fromExpress, fromHot] = [await raw(express.port, sent), await raw(hot.port, sent)];
    const id = /^X-Request-Id: ([0-9a-f-]{36})\r\n/m;
    expect(fromHot).toMatch(id);
    expect(fromHot.replace(id, '')).toBe(fromExpress.replace(id, ''));
  });

  it('answers every failure as Express does, leaving it to Express', async () => {
    const before = listener.answered;
    const failures: [string, string, Record<string, string>, number, string?][] = [
      ['GET', `/v1/products/${productId}`, bearer('till_oat_not-a-token'), 401],
      ['GET', `/v1/customers/${customerId}/state`, bearer('till_oat_not-a-token'), 401],
      ['GET', `/v1/products/${productId}`, bearer(customersOnlyToken), 403],
      ['GET', '/v1/products/no-such-product', bearer(token), 404],
      ['GET', `/v1/products/${strangerProductId}`, bearer(token), 404],
      ['GET', '/v1/customers/no-such-customer/state', bearer(token), 404],
      ['GET', '/v1/customers/external/state', bearer(token), 404],
      ['GET', `/v1/products/${productId}`, { ...bearer(token), 'Polar-Version': '2020-01' }, 404],
      ['GET', `/v1/products/${productId}`, bearer('not-a-session'), 401],
      ['GET', `/v1/products/${productId}`, { ...bearer(token), 'Content-Type': 'application/json', 'Content-Length': '5' }, 422, 'nope!'],
    ];
    for (const [method, path, headers, status, body] of failures) {
      const answer = await same(method, path, headers, body);
      expect(answer.split('\r\n')[0], `${method} ${path}`).toBe(`HTTP/1.1 ${status} ${{ 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 422: 'Unprocessable Entity' }[status]}`);
    }
    expect(listener.answered).toBe(before);
  });

  it('leaves to Express what only Express answers: HEAD, conditional GETs, queries, other spellings of the path, user sessions', async () => {
    const before = listener.answered;
    const etag = /^ETag: (.*)\r\n/m.exec(await same('GET', `/v1/products/${productId}`, bearer(token)))![1]!;
    const cases: [string, string, Record<string, string>, number][] = [
      ['HEAD', `/v1/products/${productId}`, bearer(token), 200],
      ['GET', `/v1/products/${productId}`, { ...bearer(token), 'If-None-Match': etag }, 304],
      ['GET', `/v1/products/${productId}?expand=x`, bearer(token), 200],
      ['GET', `/V1/Products/${productId}`, bearer(token), 200],
      ['GET', `/v1/products/${productId}/`, bearer(token), 200],
      ['GET', `/v1/customers/${customerId}/state`, bearer(owner.token), 200],
    ];
    for (const [method, path, headers, status] of cases) {
      const answer = await same(method, path, headers);
      expect(answer.split('\r\n')[0], `${method} ${path}`).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    }
    expect(listener.answered).toBe(before + 1);
  });
});
