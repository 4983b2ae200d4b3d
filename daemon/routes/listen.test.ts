import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../core/db/database.js';
import { listEvents } from '../../core/webhooks/outbox.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { startDaemon } from '../server.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { openSse, type SseStream } from '../testing/sse.js';
import { createOrganization, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
const streams: SseStream[] = [];

const listenUrl = (orgId = organizationId, base = daemon.url) => `${base}/v1/cli/listen/${orgId}`;
const listen = async (headers: Record<string, string> = {}, url = listenUrl()) => {
  const stream = await openSse(url, { authorization: `Bearer ${owner.token}`, ...headers });
  streams.push(stream);
  return stream;
};

/** Creates a customer (customer.created, customer.state_changed) and answers its email. */
async function createCustomer(base = daemon.url): Promise<string> {
  const email = `c-${randomBytes(4).toString('hex')}@example.com`;
  const res = await v1Request(base, owner.token, 'POST', '/customers/', { email, organization_id: organizationId });
  expect(res.status).toBe(201);
  return email;
}

const emailOf = (data: string) => (JSON.parse(data) as { data?: { email?: string } }).data?.email;

beforeAll(async () => {
  daemon = await startTestDaemon({ TILL_LISTEN_HEARTBEAT_MS: '200', TILL_LISTEN_POLL_MS: '200' });
  owner = await signUp(daemon.url, { name: 'Lena Listen' });
  organizationId = await createOrganization(owner, 'Listen Shop');
});
afterAll(async () => {
  for (const stream of streams) stream.close();
  await daemon?.close();
});

describe('GET /v1/cli/listen/{organization_id}', () => {
  it('refuses a caller without credentials', async () => {
    const res = await fetch(listenUrl());
    expect(res.status).toBe(401);
  });

  it('answers 404 for an organization the caller does not belong to', async () => {
    const stranger = await signUp(daemon.url, { name: 'Sam Stranger' });
    const res = await fetch(listenUrl(), { headers: { authorization: `Bearer ${stranger.token}` } });
    expect(res.status).toBe(404);
    expect((await res.json()).error).toBe('ResourceNotFound');
  });

  it('refuses an access token without a webhooks scope', async () => {
    const minted = await v1Request(daemon.url, owner.token, 'POST', '/organization-access-tokens/', { comment: 'no hooks', scopes: ['products:read'] });
    const { token } = (await minted.json()) as { token: string };
    const res = await fetch(listenUrl(), { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(403);
  });

  it('ends the stream of an access token revoked while it listens', async () => {
    const minted = await v1Request(daemon.url, owner.token, 'POST', '/organization-access-tokens/', { comment: 'listener', scopes: ['webhooks:read'] });
    const { token, organization_access_token } = (await minted.json()) as { token: string; organization_access_token: { id: string } };
    const stream = await openSse(listenUrl(), { authorization: `Bearer ${token}` });
    streams.push(stream);
    expect(stream.status).toBe(200);
    await stream.waitFor((m) => m.event === 'ready');
    const revoked = await v1Request(daemon.url, owner.token, 'DELETE', `/organization-access-tokens/${organization_access_token.id}`);
    expect(revoked.status).toBe(204);
    // Checked every four heartbeats (200 ms here).
    await stream.ended;
    const again = await fetch(listenUrl(), { headers: { authorization: `Bearer ${token}` } });
    expect(again.status).toBe(401);
  });

  it('streams each committed event with its id, type and the exact webhook body', async () => {
    const stream = await listen();
    expect(stream.status).toBe(200);
    await stream.waitFor((m) => m.event === 'ready');
    const email = await createCustomer();
    const message = await stream.waitFor((m) => m.event === 'customer.created' && emailOf(m.data) === email);
    const [stored] = (await listEvents(daemon.db, organizationId, { type: 'customer.created' })).filter((e) => (e.payload.data as { email: string }).email === email);
    expect(message.id).toBe(stored.id);
    expect(JSON.parse(message.data)).toEqual(stored.payload);
    stream.close();
  });

  it("does not carry another organization's events", async () => {
    const otherOrg = await createOrganization(owner, 'Other Shop');
    const stream = await listen({}, listenUrl(otherOrg));
    await stream.waitFor((m) => m.event === 'ready');
    const email = await createCustomer();
    // The owner's own stream of the first organization sees it; the other one must not.
    const mine = await listen();
    await mine.waitFor((m) => m.event === 'ready');
    const later = await createCustomer();
    await mine.waitFor((m) => emailOf(m.data) === later);
    expect(stream.messages.filter((m) => m.event !== 'ready')).toEqual([]);
    expect(email).not.toBe(later);
    stream.close();
    mine.close();
  });

  it('gives a client reconnecting with Last-Event-ID everything it missed, in order, then goes live', async () => {
    const first = await listen();
    await first.waitFor((m) => m.event === 'ready');
    const seen = await createCustomer();
    const last = await first.waitFor((m) => m.event === 'customer.created' && emailOf(m.data) === seen);
    first.close();

    const missed = [await createCustomer(), await createCustomer()];
    const again = await listen({ 'last-event-id': last.id! });
    const ready = await again.waitFor((m) => m.event === 'ready');
    const replayed = again.messages.filter((m) => m.event === 'customer.created').map((m) => emailOf(m.data));
    expect(replayed).toEqual(missed);
    expect(JSON.parse(ready.data).replayed).toBeGreaterThanOrEqual(2);
    // Each replayed event keeps its id, so a later reconnect resumes after it.
    const ids = again.messages.filter((m) => m.id).map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    const live = await createCustomer();
    await again.waitFor((m) => emailOf(m.data) === live);
    again.close();
  });

  it('accepts the last event id as a query parameter too (browsers cannot set the header)', async () => {
    const stream = await listen();
    await stream.waitFor((m) => m.event === 'ready');
    const a = await createCustomer();
    const message = await stream.waitFor((m) => emailOf(m.data) === a);
    stream.close();
    const b = await createCustomer();
    const again = await listen({}, `${listenUrl()}?last_event_id=${message.id}`);
    await again.waitFor((m) => m.event === 'ready');
    expect(again.messages.filter((m) => m.event === 'customer.created').map((m) => emailOf(m.data))).toEqual([b]);
    again.close();
  });

  it("opens with the organization's latest events when a first connection asks for ?recent=N, oldest first, then goes live", async () => {
    await createCustomer();
    await createCustomer();
    const held = await listEvents(daemon.db, organizationId);
    const stream = await listen({}, `${listenUrl()}?recent=3`);
    const ready = await stream.waitFor((m) => m.event === 'ready');
    expect(JSON.parse(ready.data).replayed).toBe(3);
    const history = stream.messages.slice(0, stream.messages.indexOf(ready)).filter((m) => m.id);
    expect(history.map((m) => m.id)).toEqual(held.slice(-3).map((e) => e.id));
    expect(history.map((m) => JSON.parse(m.data))).toEqual(held.slice(-3).map((e) => e.payload));
    const live = await createCustomer();
    await stream.waitFor((m) => emailOf(m.data) === live);
    const ids = stream.messages.filter((m) => m.id).map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    stream.close();
  });

  it('refuses ?recent= that is not a whole number up to 1000, before the stream opens', async () => {
    for (const recent of ['1001', '-1', 'ten']) {
      const res = await fetch(`${listenUrl()}?recent=${recent}`, { headers: { authorization: `Bearer ${owner.token}` } });
      expect(res.status).toBe(422);
      expect(JSON.stringify(await res.json())).toContain('recent');
    }
  });

  it('says events may have been missed when the last event id is not held', async () => {
    const stream = await listen({ 'last-event-id': 'no-such-event' });
    const gap = await stream.waitFor((m) => m.event === 'gap');
    expect(JSON.parse(gap.data).last_event_id).toBe('no-such-event');
    await stream.waitFor((m) => m.event === 'ready');
    stream.close();
  });

  it('sends heartbeats while nothing happens', async () => {
    const stream = await listen();
    await stream.waitFor((m) => m.event === 'ready');
    await expect.poll(() => stream.comments.filter((c) => c.includes('keep-alive')).length, { timeout: 3000 }).toBeGreaterThanOrEqual(2);
    stream.close();
  });

  it('ends open streams when the daemon stops, without waiting out the grace period', async () => {
    const own = await startTestDaemon();
    const user = await signUp(own.url, { name: 'Stop Watch' });
    const orgId = await createOrganization(user, 'Stopping');
    const stream = await openSse(`${own.url}/v1/cli/listen/${orgId}`, { authorization: `Bearer ${user.token}` });
    await stream.waitFor((m) => m.event === 'ready');
    const started = Date.now();
    await own.stop();
    await stream.ended;
    // The shutdown grace period is 10 s: an open stream must not hold the daemon that long.
    expect(Date.now() - started).toBeLessThan(5000);
    await own.close();
  });
});

describe('stream settings', () => {
  it('refuses a poll or heartbeat interval too short to be sane, naming the variable', () => {
    const base = { TILL_DATA_DIR: mkdtempSync(join(tmpdir(), 'till-data-')), TILL_SECRET: 'test-secret-test-secret-test-secret-0123' };
    expect(() => loadConfig({ ...base, TILL_LISTEN_POLL_MS: '10' })).toThrow(/TILL_LISTEN_POLL_MS must be a whole number ≥ 50/);
    expect(() => loadConfig({ ...base, TILL_LISTEN_HEARTBEAT_MS: 'often' })).toThrow(/TILL_LISTEN_HEARTBEAT_MS/);
    expect(loadConfig(base).listen).toEqual({ pollMs: 1000, heartbeatMs: 15_000 });
  });
});

describe.skipIf(!process.env.TILL_TEST_DATABASE_URL)('several daemons on one PostgreSQL database', () => {
  it("carries every daemon's events on every daemon's stream (LISTEN/NOTIFY, no polling)", async () => {
    // The second daemon polls once a minute: only a notification can bring it the event in time.
    const config = loadConfig({ TILL_PORT: '0', TILL_DATA_DIR: mkdtempSync(join(tmpdir(), 'till-data-')), TILL_SECRET: 'test-secret-test-secret-test-secret-0123', TILL_RATE_LIMIT: 'off', TILL_LISTEN_POLL_MS: '60000' });
    config.database = daemon.database.config;
    const db = createDatabase(daemon.database.config);
    const second = await startDaemon(config, createLogger('silent'), { db });
    try {
      const stream = await listen({}, listenUrl(organizationId, second.url));
      await stream.waitFor((m) => m.event === 'ready');
      const email = await createCustomer(daemon.url);
      await stream.waitFor((m) => m.event === 'customer.created' && emailOf(m.data) === email, 5000);
      stream.close();
    } finally {
      await second.stop();
    }
  });
});
