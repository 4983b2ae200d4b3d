import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { insertCustomer } from '../billing/customers/repository.js';
import { newId } from '../db/columns.js';
import { migrateToLatest } from '../db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { checkIngest, ingestEvents, writeBatches } from './ingest.js';

let database: TestDatabase;
const clock = fixedClock(new Date('2026-03-01T12:00:00.000Z'));

async function newOrganization(): Promise<{ organizationId: string; customerA: string; customerB: string }> {
  const organizationId = newId();
  await database.db('organization').insert({ id: organizationId, name: 'Ingest Co', slug: `ingest-${organizationId}`, createdAt: new Date().toISOString() });
  const [customerA, customerB] = [crypto.randomUUID(), crypto.randomUUID()];
  const customer = (id: string, externalId: string | null) =>
    insertCustomer(database.db, {
      id,
      organizationId,
      externalId,
      email: `${id}@example.com`,
      emailVerified: false,
      name: null,
      billingName: null,
      billingAddress: null,
      taxId: null,
      locale: null,
      metadata: {},
      createdAt: new Date('2026-01-01T00:00:00.000Z'),
      modifiedAt: null,
      deletedAt: null,
    });
  await customer(customerA, null);
  await customer(customerB, 'ext-b');
  return { organizationId, customerA, customerB };
}

const body = (events: Record<string, unknown>[]) => ({ events });
const storedEvents = async (organizationId: string) =>
  Object.fromEntries(((await database.db('events').where({ organization_id: organizationId }).select('id', 'external_id', 'customer_id', 'parent_id')) as Record<string, string | null>[]).map((row) => [row.external_id, row]));

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateToLatest(database.db);
});
afterAll(async () => {
  await database?.destroy();
});

describe('ingest calls written together', () => {
  it('answer each call with its own counts, refuse a call alone on what the transaction checks, and resolve parents across calls', async () => {
    const { organizationId, customerA, customerB } = await newOrganization();
    const organizationOf = () => organizationId;
    const at = '2026-03-01T11:00:00.000Z';
    await ingestEvents(database.db, clock, organizationOf, body([{ name: 'call', customer_id: customerA, external_id: 'k0', timestamp: at }]));

    const batches = await Promise.all(
      [
        [
          { name: 'call', customer_id: customerA, external_id: 'k1', timestamp: at },
          { name: 'call', external_customer_id: 'ext-b', external_id: 'k2', timestamp: '2026-03-01T10:00:00.000Z' },
        ],
        [
          // k1 again (the call before has it), k0 again (stored before), and a child of the call before's k2.
          { name: 'call', customer_id: customerB, external_id: 'k1', timestamp: at },
          { name: 'call', customer_id: customerA, external_id: 'k0', timestamp: at },
          { name: 'child', customer_id: customerB, external_id: 'k3', parent_id: 'k2', timestamp: at },
        ],
        [
          { name: 'call', customer_id: customerA, external_id: 'k4', timestamp: at },
          { name: 'call', customer_id: crypto.randomUUID(), external_id: 'k5', timestamp: at },
        ],
        [{ name: 'call', customer_id: customerB, external_id: 'k6', parent_id: 'nowhere', timestamp: at }],
      ].map(async (events) => (await checkIngest(database.db, clock, organizationOf, body(events)))!),
    );
    const outcomes = await writeBatches(database.db, batches);

    expect(outcomes.slice(0, 2)).toEqual([
      { ok: true, value: { inserted: 2, duplicates: 0 } },
      { ok: true, value: { inserted: 1, duplicates: 2 } },
    ]);
    expect(outcomes[2]).toMatchObject({ ok: false, error: { code: 'INVALID_EVENTS', details: [{ loc: ['body', 'events', 1, 'customer_id'], msg: 'Customer does not exist.' }] } });
    expect(outcomes[3]).toMatchObject({ ok: false, error: { code: 'INVALID_EVENTS', details: [{ loc: ['body', 'events', 0, 'parent_id'], msg: 'Parent event does not exist.' }] } });
    const stored = await storedEvents(organizationId);
    expect(Object.keys(stored).sort()).toEqual(['k0', 'k1', 'k2', 'k3']);
    // k1 is the first call's (customer A), as if the calls had come one after the other.
    expect(stored.k1.customer_id).toBe(customerA);
    expect(stored.k3.parent_id).toBe(stored.k2.id);
    // customer B's first user event is the earliest of the calls written (k2, sent with its external id).
    const b = await database.db('customers').where({ id: customerB }).first('first_user_event_at');
    expect(new Date(b.first_user_event_at).toISOString()).toBe('2026-03-01T10:00:00.000Z');
  });

  it('store every event of calls made at once, each counted once, whichever calls share a transaction', async () => {
    const { organizationId, customerA } = await newOrganization();
    const organizationOf = () => organizationId;
    const calls = Array.from({ length: 25 }, (_, call) =>
      ingestEvents(
        database.db,
        clock,
        organizationOf,
        // Every call repeats one event of the call before it.
        body(Array.from({ length: 20 }, (_, i) => ({ name: 'call', customer_id: customerA, external_id: `c${call * 19 + i}`, timestamp: '2026-03-01T11:00:00.000Z' }))),
      ),
    );
    const results = await Promise.all(calls);
    expect(results.reduce((sum, result) => sum + result.inserted, 0)).toBe(25 * 19 + 1);
    expect(results.reduce((sum, result) => sum + result.duplicates, 0)).toBe(24);
    expect(Object.keys(await storedEvents(organizationId))).toHaveLength(25 * 19 + 1);
  });
});
