import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPaidOrder } from '../../../core/billing/orders/testing.js';
import { systemClock, type Clock } from '../../../core/clock.js';
import { createSandboxProcessor } from '../../../core/payments/sandbox.js';
import { IDEMPOTENCY_LOCK_MS, IDEMPOTENCY_TTL_MS, purgeExpiredIdempotencyKeys } from '../../../core/idempotency/service.js';
import { findRecord, insertClaim } from '../../../core/idempotency/repository.js';
import { fingerprintOf } from './idempotency.js';
import { signUp, type SignedIn } from '../../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../../testing/daemon.js';
import { createOrganization, polarSdk } from '../../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let customerId: string;
let token: string;

/** A /v1 write with an Idempotency-Key. */
const keyed = (bearer: string | undefined, key: string, method: string, path: string, body?: unknown) =>
  fetch(`${daemon.url}/v1${path}`, {
    method,
    headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), 'content-type': 'application/json', 'idempotency-key': key },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const paidOrder = async () => (await seedPaidOrder(daemon.db, systemClock, createSandboxProcessor({ db: daemon.db }), { organizationId, customerId, label: 'Course', amount: 1000 })).id;
const refundsOf = async (orderId: string) => (await polarSdk(daemon.url, owner.token).refunds.list({ orderId })).result.items;
const orderOf = async (orderId: string) => (await fetch(`${daemon.url}/v1/orders/${orderId}`, { headers: { authorization: `Bearer ${token}` } })).json();
const productsNamed = async (name: string) => (await polarSdk(daemon.url, token).products.list({ query: name, limit: 100 })).result.items.filter((p) => p.name === name);

/** Runs `count` calls of `call`, at most `width` at a time, and answers their results in order. */
async function inWaves<T>(count: number, width: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += width) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, i) => call(start + i)))));
  }
  return results;
}

const uniqueKey = (label: string) => `${label}-${Math.random().toString(36).slice(2)}`;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Ida Empotent' });
  organizationId = await createOrganization(owner, 'Retry Co');
  customerId = (await polarSdk(daemon.url, owner.token).customers.create({ email: 'ada@example.com', organizationId })).id;
  const res = await fetch(`${daemon.url}/v1/organization-access-tokens/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ organization_id: organizationId, comment: 'ci', scopes: ['products:write', 'refunds:write', 'orders:read', 'discounts:write'] }),
  });
  token = (await res.json()).token;
});
afterAll(async () => {
  await daemon?.close();
});

describe('Idempotency-Key on /v1 writes', () => {
  it('answers a keyed write without credentials 401 and keeps nothing', async () => {
    const key = uniqueKey('anon');
    const res = await keyed(undefined, key, 'POST', '/products/', { name: 'Nope', prices: [{ amount_type: 'free' }] });
    expect(res.status).toBe(401);
    expect(await findRecord(daemon.db, `organization:${organizationId}`, key)).toBeUndefined();
  });

  it('replays the first answer, status and body, for a repeat of the same request, and creates once', async () => {
    const key = uniqueKey('product');
    const body = { name: 'Replayed ebook', prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }], metadata: { a: '1', b: '2' } };
    const first = await keyed(token, key, 'POST', '/products/', body);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const created = await first.json();
    // The same fields in another order are the same request.
    const again = await keyed(token, key, 'POST', '/products/', { metadata: { b: '2', a: '1' }, prices: body.prices, name: body.name });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(created);
    expect(await productsNamed('Replayed ebook')).toHaveLength(1);
  });

  it('does not count Polar-Version in the match: a retry with the same key and body in another version is the same request, replayed', async () => {
    const key = uniqueKey('version');
    const body = { name: 'Versioned ebook', prices: [{ amount_type: 'fixed', price_amount: 700, price_currency: 'usd' }] };
    const send = (version: string | undefined) =>
      fetch(`${daemon.url}/v1/products/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key, ...(version ? { 'polar-version': version } : {}) },
        body: JSON.stringify(body),
      });
    const first = await send('2026-04');
    expect(first.status).toBe(201);
    const created = await first.json();
    for (const version of ['2026-10', undefined]) {
      const again = await send(version);
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      // The first answer, as it was written.
      expect(await again.json()).toEqual(created);
    }
    expect(await productsNamed('Versioned ebook')).toHaveLength(1);
    // A version tilld does not serve is refused before the key is looked at: the key keeps its first answer.
    expect((await send('2027-01')).status).toBe(404);
    expect((await findRecord(daemon.db, `organization:${organizationId}`, key))?.status).toBe(201);
  });

  it('refuses the same key with another body, method or path with a 422 and runs nothing', async () => {
    const key = uniqueKey('reuse');
    expect((await keyed(token, key, 'POST', '/products/', { name: 'Reuse one', prices: [{ amount_type: 'free' }] })).status).toBe(201);
    const other = await keyed(token, key, 'POST', '/products/', { name: 'Reuse two', prices: [{ amount_type: 'free' }] });
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', detail: [{ loc: ['header', 'idempotency-key'] }] });
    const elsewhere = await keyed(token, key, 'POST', '/discounts/', { name: 'Reuse one', type: 'percentage', basis_points: 1000, duration: 'once' });
    expect(elsewhere.status).toBe(422);
    expect(await productsNamed('Reuse two')).toHaveLength(0);
  });

  it('refuses a key that is empty, too long or holds a space', async () => {
    for (const key of ['x'.repeat(256), 'has space', '']) {
      const res = await keyed(token, key, 'POST', '/products/', { name: 'Bad key', prices: [{ amount_type: 'free' }] });
      expect(res.status).toBe(422);
      expect(await res.json()).toMatchObject({ code: 'INVALID_IDEMPOTENCY_KEY' });
    }
    expect(await productsNamed('Bad key')).toHaveLength(0);
  });

  it('keeps keys per organization: another organization’s token with the same key runs its own request', async () => {
    const key = uniqueKey('scoped');
    const otherOrg = await createOrganization(owner, 'Other Co');
    const mint = await fetch(`${daemon.url}/v1/organization-access-tokens/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ organization_id: otherOrg, comment: 'ci', scopes: ['products:write'] }),
    });
    const otherToken = (await mint.json()).token;
    const body = { name: 'Scoped product', prices: [{ amount_type: 'free' }] };
    const mine = await (await keyed(token, key, 'POST', '/products/', body)).json();
    const theirs = await keyed(otherToken, key, 'POST', '/products/', body);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    const theirProduct = await theirs.json();
    expect(theirProduct.id).not.toBe(mine.id);
    expect(theirProduct.organization_id).toBe(otherOrg);
  });

  it('makes 1,000 replays of one refund one refund', async () => {
    const orderId = await paidOrder();
    const key = uniqueKey('refund');
    const body = { order_id: orderId, amount: 100, reason: 'customer_request' };
    const first = await keyed(token, key, 'POST', '/refunds/', body);
    expect(first.status).toBe(201);
    const refund = await first.json();
    const replays = await inWaves(1000, 25, async () => {
      const res = await keyed(token, key, 'POST', '/refunds/', body);
      return { status: res.status, replayed: res.headers.get('idempotent-replayed'), id: (await res.json()).id };
    });
    expect(replays.every((r) => r.status === 201 && r.replayed === 'true' && r.id === refund.id)).toBe(true);
    expect(await refundsOf(orderId)).toHaveLength(1);
    expect(await orderOf(orderId)).toMatchObject({ refunded_amount: 100, status: 'partially_refunded' });
  }, 300_000);

  it('lets 20 concurrent first requests with one key make one refund: the others get 409 or the replay', async () => {
    const orderId = await paidOrder();
    const key = uniqueKey('race');
    const body = { order_id: orderId, amount: 250, reason: 'duplicate' };
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await keyed(token, key, 'POST', '/refunds/', body);
        return { status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true', body: await res.json() };
      }),
    );
    const ran = answers.filter((a) => a.status === 201 && !a.replayed);
    expect(ran).toHaveLength(1);
    for (const other of answers.filter((a) => a !== ran[0])) {
      if (other.status === 409) expect(other.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE' });
      else expect(other).toMatchObject({ status: 201, replayed: true, body: { id: ran[0].body.id } });
    }
    expect(await refundsOf(orderId)).toHaveLength(1);
    expect(await orderOf(orderId)).toMatchObject({ refunded_amount: 250 });
  });

  it('replays a refusal that is the request’s answer, but not invalid input, which may be fixed under the same key', async () => {
    const orderId = await paidOrder();
    const tooMuch = uniqueKey('too-much');
    const refused = await keyed(token, tooMuch, 'POST', '/refunds/', { order_id: orderId, amount: 5000, reason: 'other' });
    expect(refused.status).toBe(422);
    const again = await keyed(token, tooMuch, 'POST', '/refunds/', { order_id: orderId, amount: 5000, reason: 'other' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await refused.json());

    const fixable = uniqueKey('fixable');
    const invalid = await keyed(token, fixable, 'POST', '/refunds/', { order_id: orderId, amount: 100, reason: 'not-a-reason' });
    expect(invalid.status).toBe(422);
    expect(await invalid.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((await keyed(token, fixable, 'POST', '/refunds/', { order_id: orderId, amount: 100, reason: 'other' })).status).toBe(201);
    expect(await refundsOf(orderId)).toHaveLength(1);
  });

  it('answers 409 while the same request runs, and lets a request retake a key left running past the lock', async () => {
    const scope = `organization:${organizationId}`;
    const body = { name: 'Stuck product', prices: [{ amount_type: 'free' }] };
    // Rows as a daemon leaves them mid-request (or when it died mid-request, for the old one).
    const claim = (key: string, ageMs: number) =>
      insertClaim(daemon.db, { scope, key, fingerprint: fingerprintOf('POST', '/v1/products/', body), method: 'POST', path: '/v1/products/', token: `t-${key}`, nowMs: Date.now() - ageMs, expiresAtMs: Date.now() - ageMs + IDEMPOTENCY_TTL_MS });
    const running = uniqueKey('running');
    await claim(running, 0);
    const busy = await keyed(token, running, 'POST', '/products/', body);
    expect(busy.status).toBe(409);
    expect(await busy.json()).toMatchObject({ error: 'Conflict', code: 'IDEMPOTENCY_KEY_IN_USE' });
    expect(await productsNamed('Stuck product')).toHaveLength(0);

    const stale = uniqueKey('stale');
    await claim(stale, IDEMPOTENCY_LOCK_MS + 1000);
    const retaken = await keyed(token, stale, 'POST', '/products/', body);
    expect(retaken.status).toBe(201);
    expect(await findRecord(daemon.db, scope, stale)).toMatchObject({ state: 'done', status: 201 });
    expect(await productsNamed('Stuck product')).toHaveLength(1);
  });

  it('purges keys after 24 hours; a purged or expired key runs its request anew', async () => {
    const key = uniqueKey('expiry');
    const body = { name: 'Expiring product', prices: [{ amount_type: 'free' }] };
    expect((await keyed(token, key, 'POST', '/products/', body)).status).toBe(201);
    const scope = `organization:${organizationId}`;
    expect(await findRecord(daemon.db, scope, key)).toBeDefined();
    const tomorrow: Clock = { now: () => new Date(Date.now() + IDEMPOTENCY_TTL_MS + 1000) };
    expect(await purgeExpiredIdempotencyKeys(daemon.db, tomorrow)).toBeGreaterThan(0);
    expect(await findRecord(daemon.db, scope, key)).toBeUndefined();
    expect((await keyed(token, key, 'POST', '/products/', body)).headers.get('idempotent-replayed')).toBeNull();
    expect(await productsNamed('Expiring product')).toHaveLength(2);
  });
});
