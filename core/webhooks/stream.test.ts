import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../clock.js';
import { dialectOf } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { recordEvent, type SequencedEvent } from './outbox.js';
import { eventHub, closeEventHub, type EventHub } from './stream.js';

let database: TestDatabase;
let hub: EventHub;
const organizationId = randomUUID();
const other = randomUUID();

const record = (orgId = organizationId) =>
  database.db.transaction((trx) => recordEvent(trx, systemClock, { organizationId: orgId, type: 'customer.created', data: { id: randomUUID() } }));

/** Subscribes and collects what the hub hands over. */
function collect(orgId = organizationId) {
  const seen: SequencedEvent[] = [];
  const stop = hub.subscribe(orgId, (event) => seen.push(event));
  return { seen, stop };
}

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateToLatest(database.db);
  const now = new Date().toISOString();
  for (const id of [organizationId, other]) await database.db('organization').insert({ id, name: `Org ${id.slice(0, 4)}`, slug: `org-${id.slice(0, 8)}`, createdAt: now });
  // A long fallback poll: events must arrive because their commit woke the hub.
  hub = eventHub(database.db, { pollMs: 60_000 });
  await hub.ready();
});
afterAll(async () => {
  await closeEventHub(database.db);
  await database.destroy();
});

describe('the event stream hub', () => {
  it("hands each committed event to its organization's subscribers once, in order", async () => {
    const mine = collect();
    const theirs = collect(other);
    const a = await record();
    const b = await record(other);
    const c = await record();
    await expect.poll(() => mine.seen.map((e) => e.id)).toEqual([a.id, c.id]);
    await expect.poll(() => theirs.seen.map((e) => e.id)).toEqual([b.id]);
    expect(hub.position()).toBeGreaterThanOrEqual(mine.seen[1].seq);
    mine.stop();
    theirs.stop();
  });

  it('never announces an event whose transaction rolled back', async () => {
    const { seen, stop } = collect();
    await database.db
      .transaction(async (trx) => {
        await recordEvent(trx, systemClock, { organizationId, type: 'customer.created', data: { id: 'rolled-back' } });
        throw new Error('abort');
      })
      .catch(() => {});
    const after = await record();
    await expect.poll(() => seen.map((e) => e.id)).toEqual([after.id]);
    stop();
  });

  it.skipIf(!process.env.TILL_TEST_DATABASE_URL)('delivers an event whose transaction committed after a later one (a hole in seq filled late)', async () => {
    expect(dialectOf(database.db)).toBe('postgres');
    const { seen, stop } = collect();
    // A takes its seq first but commits last.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let slowId = '';
    const slow = database.db.transaction(async (trx) => {
      slowId = (await recordEvent(trx, systemClock, { organizationId, type: 'customer.created', data: { id: 'slow' } })).id;
      await held;
    });
    await expect.poll(() => slowId).not.toBe('');
    const fast = await record();
    await expect.poll(() => seen.map((e) => e.id)).toEqual([fast.id]);
    release();
    await slow;
    await expect.poll(() => seen.map((e) => e.id)).toEqual([fast.id, slowId]);
    stop();
  });

  it('ends subscriptions when it closes', async () => {
    const own = await createTestDatabase();
    try {
      await migrateToLatest(own.db);
      const ownHub = eventHub(own.db);
      await ownHub.ready();
      let closed = false;
      ownHub.subscribe(organizationId, () => {}, () => (closed = true));
      await closeEventHub(own.db);
      expect(closed).toBe(true);
    } finally {
      await own.destroy();
    }
  });
});
