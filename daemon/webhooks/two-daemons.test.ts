import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromDbJson } from '../../core/db/columns.js';
import { createTestDatabase, type TestDatabase } from '../../core/testing/database.js';
import { signUp } from '../testing/auth-client.js';
import { createOrganization, v1Request } from '../testing/v1.js';
import { startReceiver, type Receiver } from './receiver.js';
import { buildTilld, spawnTilld, type SpawnedDaemon } from './spawn.js';

// More than one daemon: two tilld processes share one PostgreSQL database. Every delivery is claimed by one of
// them (FOR UPDATE SKIP LOCKED); one is killed with SIGKILL mid-way and the other finishes the work: every event
// arrives, and an event arrives twice only if the killed daemon was sending it when it died.

const postgres = Boolean(process.env.TILL_TEST_DATABASE_URL);
const EVENTS = 60;
const CONCURRENCY = 4;

let database: TestDatabase;
let receiver: Receiver;
let bin: string;
const daemons: SpawnedDaemon[] = [];

beforeAll(async () => {
  if (!postgres) return;
  database = await createTestDatabase();
  bin = await buildTilld();
  receiver = await startReceiver();
  // Slow answers keep both daemons busy long enough for the kill to land mid-delivery.
  receiver.respond = () => ({ status: 200, delayMs: 20 + Math.floor(Math.random() * 30) });
});
afterAll(async () => {
  for (const daemon of daemons) await daemon.kill();
  await receiver?.close();
  await database?.destroy();
  if (bin) rmSync(dirname(dirname(bin)), { recursive: true, force: true });
});

describe.skipIf(!postgres)('two daemons on one PostgreSQL database (skipped on SQLite: a SQLite file belongs to one daemon)', () => {
  it('shares deliveries between the daemons and loses nothing when one is killed mid-way', { timeout: 180_000 }, async () => {
    const config = database.config as { connectionString: string };
    const env = {
      TILL_DATABASE_URL: config.connectionString,
      TILL_SECRET: 'two-daemons-secret-two-daemons-secret-01',
      TILL_DATA_DIR: '/tmp',
      TILL_WEBHOOKS_ALLOW_PRIVATE: '1',
      TILL_WEBHOOKS_POLL_MS: '10',
      TILL_WEBHOOKS_RETRY_BASE_MS: '5',
      // A killed daemon's claims lapse after 2 × timeout + 5 s.
      TILL_WEBHOOKS_TIMEOUT_MS: '1000',
      TILL_WEBHOOKS_CONCURRENCY: String(CONCURRENCY),
    };
    const first = await spawnTilld(bin, env);
    daemons.push(first);
    const owner = await signUp(first.url, { name: 'Dua Daemon' });
    const organizationId = await createOrganization(owner, 'Twin Shop');
    const second = await spawnTilld(bin, env);
    daemons.push(second);

    // Two endpoints, so the daemons have parallel queues to share (each endpoint is served in order).
    for (const path of ['/a', '/b']) {
      const res = await v1Request(first.url, owner.token, 'POST', '/webhooks/endpoints', { url: `${receiver.url}${path}`, format: 'raw', events: ['customer.created'], organization_id: organizationId });
      expect(res.status).toBe(201);
    }
    for (let i = 0; i < EVENTS; i++) {
      const via = i % 2 ? second : first;
      const res = await v1Request(via.url, owner.token, 'POST', '/customers/', { email: `twin-${i}@example.com`, organization_id: organizationId });
      expect(res.status).toBe(201);
    }
    await receiver.waitFor((received) => received.length >= EVENTS / 2, 60_000);
    const beforeKill = receiver.received.length;
    await first.kill();

    const db = database.db;
    const events = (await db('webhook_events').where({ organization_id: organizationId, type: 'customer.created' })).map((row) => ({ id: String(row.id), payload: fromDbJson(row.payload) }));
    expect(events).toHaveLength(EVENTS);
    const key = (path: string, id: string) => `${path} ${id}`;
    const expected = events.flatMap((e) => ['/a', '/b'].map((path) => key(path, e.id)));
    await receiver.waitFor((received) => {
      const seen = new Set(received.map((r) => key(r.path, String(r.headers['webhook-id']))));
      return expected.every((k) => seen.has(k));
    }, 90_000);

    const counts = new Map<string, number>();
    for (const r of receiver.received) counts.set(key(r.path, String(r.headers['webhook-id'])), (counts.get(key(r.path, String(r.headers['webhook-id']))) ?? 0) + 1);
    const doubled = [...counts.values()].filter((n) => n > 1).length;
    // While both daemons ran, no attempt was claimed twice: nothing arrived twice.
    const early = receiver.received.slice(0, beforeKill).map((r) => key(r.path, String(r.headers['webhook-id'])));
    expect(new Set(early).size).toBe(early.length);
    // Only what the killed daemon had in flight may arrive twice: at most its concurrency.
    expect(doubled).toBeLessThanOrEqual(CONCURRENCY);
    const byEvent = new Map(events.map((e) => [e.id, e.payload]));
    for (const r of receiver.received) expect(JSON.parse(r.body)).toEqual(byEvent.get(String(r.headers['webhook-id'])));
    // One delivery row per attempt that was recorded; every queued event ends succeeded.
    const statuses = await db('webhook_endpoint_events').where({ organization_id: organizationId }).select('status');
    expect(statuses).toHaveLength(EVENTS * 2);
    await expect.poll(async () => (await db('webhook_endpoint_events').where({ organization_id: organizationId, status: 'succeeded' }).count({ n: '*' }))[0].n, { timeout: 20_000 }).toBe(String(EVENTS * 2));
  });
});
