import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMetersByIds } from '../core/metering/meters-repository.js';
import { meterQuantities, type QuantitiesQuery } from '../core/metering/quantities.js';
import { CUSTOMER_REFRESH_JOB } from '../core/metering/events-repository.js';
import { ROLLUP_BACKFILL_JOB } from '../core/metering/rollups.js';
import { createTestDatabase, type TestDatabase } from '../core/testing/database.js';
import { signUp } from './testing/auth-client.js';
import { seededRandom } from './testing/fuzz.js';
import { createOrganization, v1Json, v1Request } from './testing/v1.js';
import { waitFor } from './testing/poll.js';
import { buildTilld, freePort, spawnTilld, type SpawnedDaemon } from './webhooks/spawn.js';

// Issue 21: meters' rollups and customers' usage "survive a kill -9". tilld runs as a real process on a SQLite file
// (or PostgreSQL when TILL_TEST_DATABASE_URL is set) while CLIENTS clients ingest batches and meters are created (their
// backfills running), and is killed with SIGKILL at a random moment of each round. A client whose batch got no answer
// sends it again after the restart, as a client should (ingest skips events whose external_id is stored). After the
// last restart, every meter's quantities from its rollups must equal the aggregation of the events, and every
// customer's stored meter the figures of the events the test sent, written out plainly here.

const KILLS = 10;
/**
 * Clients ingesting at once: more than a daemon's ingest transactions (one on SQLite, three on PostgreSQL), so calls
 * wait for one and are written together (core/metering/ingest.ts), and the kills land on groups of calls too.
 */
const CLIENTS = 5;

let bin: string;
let daemon: SpawnedDaemon | undefined;
let test: TestDatabase;
let dataDir: string;

beforeAll(async () => {
  bin = await buildTilld();
  test = await createTestDatabase({ migrated: true });
  dataDir = mkdtempSync(join(tmpdir(), 'till-metering-crash-'));
}, 180_000);
afterAll(async () => {
  await daemon?.kill();
  await test?.destroy().catch(() => undefined);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (bin) rmSync(dirname(dirname(bin)), { recursive: true, force: true });
});

interface SentEvent {
  name: string;
  customer_id?: string;
  external_customer_id?: string;
  external_id: string;
  timestamp: string;
  metadata: { units: number };
}

describe('metering under SIGKILL', () => {
  it(`keeps every meter's rollups and every customer's meters equal to the events across ${KILLS} kills mid-ingest and mid-backfill`, { timeout: 900_000 }, async () => {
    const { db } = test;
    const port = await freePort();
    const env = {
      TILL_DATA_DIR: dataDir,
      TILL_DATABASE_URL: test.config.client === 'postgres' ? test.config.connectionString : test.config.filename,
      TILL_SECRET: 'metering-crash-secret-metering-crash-0123',
      TILL_JOB_INTERVAL_MS: '100',
    };
    const start = () => spawnTilld(bin, env, { port, timeoutMs: 120_000 });
    daemon = await start();
    const owner = await signUp(daemon.url, { name: 'Mia Meter' });
    const organizationId = await createOrganization(owner, 'Crash Metering');
    const api = (method: string, path: string, body?: unknown) => v1Json(daemon!.url, owner.token, method, path, body);
    const customers: { id: string; externalId: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const externalId = `crash-${i}-${Math.random().toString(36).slice(2, 8)}`;
      customers.push({ id: (await api('POST', '/customers/', { organization_id: organizationId, email: `meter${i}-${externalId}@example.com`, external_id: externalId })).id, externalId });
    }
    const use = { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'use' }] };
    const createMeter = async (name: string, aggregation: Record<string, string>) => (await api('POST', '/meters/', { organization_id: organizationId, name, filter: use, aggregation })).id as string;
    const meterIds = [await createMeter('Uses', { func: 'count' }), await createMeter('Units', { func: 'sum', property: 'units' })];

    const random = seededRandom(2121);
    const now = Date.now();
    let n = 0;
    const batchOf = (size: number): SentEvent[] =>
      Array.from({ length: size }, () => {
        const customer = customers[random.int(customers.length)]!;
        const i = n++;
        return {
          name: random.int(5) === 0 ? 'other' : 'use',
          // By id or by external id: both belong to the customer.
          ...(random.int(2) ? { customer_id: customer.id } : { external_customer_id: customer.externalId }),
          external_id: `crash-event-${i}`,
          // Anywhere in the last three days, out of order.
          timestamp: new Date(now - random.int(3 * 24 * 3600 * 1000)).toISOString(),
          metadata: { units: 1 + random.int(9) },
        };
      });
    const sent: SentEvent[] = [];
    /** Batches sent whose answer was lost to a kill: sent again after the restart. */
    let unanswered: SentEvent[][] = [];
    const ingest = async (batch: SentEvent[]) => {
      const res = await v1Request(daemon!.url, owner.token, 'POST', '/events/ingest', { events: batch }).catch(() => undefined);
      if (res?.status !== 200) unanswered.push(batch);
      else await res.text();
    };

    // A history before the kills: a meter created later backfills it in several chunks (5,000 events a chunk).
    for (let i = 0; i < 4; i++) {
      const batch = batchOf(3000);
      sent.push(...batch);
      await ingest(batch);
    }
    let lostAnswers = 0;
    let killedMidBackfill = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      daemon ??= await start();
      for (const batch of unanswered.splice(0)) await ingest(batch);
      // The clients ingest without pause; every other round a meter is created, its backfill running from then on.
      let stop = false;
      const client = async () => {
        while (!stop) {
          const batch = batchOf(50 + random.int(250));
          sent.push(...batch);
          await ingest(batch);
        }
      };
      const clients = Array.from({ length: CLIENTS }, () => client());
      if (kill % 2 === 0) {
        // Killed once the new meter's backfill has taken its first chunk in, if it is not through already.
        const meterId = await createMeter(`Late ${kill}`, kill % 4 === 0 ? { func: 'sum', property: 'units' } : { func: 'max', property: 'units' });
        meterIds.push(meterId);
        await waitFor('a backfill chunk', async () => {
          const state = await db('meter_rollup_states').where({ meter_id: meterId }).first();
          return state?.status === 'ready' || state?.cursor != null;
        }, 60_000);
        await new Promise((resolve) => setTimeout(resolve, random.int(20)));
      } else await new Promise((resolve) => setTimeout(resolve, 50 + random.int(400)));
      await daemon.kill();
      daemon = undefined;
      stop = true;
      await Promise.all(clients);
      lostAnswers += unanswered.length;
      const [building] = await db('meter_rollup_states').whereIn('meter_id', meterIds).where({ status: 'building' }).whereNotNull('cursor').count({ n: '*' });
      if (Number(building!.n) > 0) killedMidBackfill++;
    }
    // The kills cut ingests off and stopped backfills part-way (else this test would prove little).
    expect(lostAnswers).toBeGreaterThan(0);
    expect(killedMidBackfill).toBeGreaterThan(0);
    daemon = await start();
    for (const batch of unanswered.splice(0)) await ingest(batch);
    expect(unanswered).toEqual([]);

    // Every backfill finished and every customer refresh done.
    await waitFor('the rollups and customer meters to catch up', async () => {
      const [states] = await db('meter_rollup_states').whereIn('meter_id', meterIds).where({ status: 'ready' }).count({ n: '*' });
      const [jobs] = await db('jobs').where({ organization_id: organizationId }).whereIn('kind', [CUSTOMER_REFRESH_JOB, ROLLUP_BACKFILL_JOB]).count({ n: '*' });
      return Number(states!.n) === meterIds.length && Number(jobs!.n) === 0;
    }, 300_000);

    // The events stored are exactly those sent, each once.
    const stored = await db('events').where({ organization_id: organizationId, source: 'user' }).count({ n: '*' });
    expect(Number(stored[0]!.n)).toBe(sent.length);

    const meters = await findMetersByIds(db, meterIds);
    expect(meters.length).toBe(meterIds.length);
    const ownerOf = (event: SentEvent) => event.customer_id ?? customers.find((c) => c.externalId === event.external_customer_id)!.id;
    for (const meter of meters) {
      for (const variant of [{ interval: 'hour' }, { interval: 'day', timezone: 'Asia/Kolkata' }, { interval: 'day', customerIds: [customers[0]!.id] }] as Partial<QuantitiesQuery>[]) {
        const query: QuantitiesQuery = { start: new Date(now - 4 * 24 * 3600 * 1000), end: new Date(now), interval: 'day', timezone: 'UTC', ...variant };
        const rolled = await meterQuantities(db, meter, query, { source: 'rollups' });
        const raw = await meterQuantities(db, meter, query, { source: 'events' });
        expect(rolled.quantities.map((q) => q.quantity), `${meter.name} ${JSON.stringify(variant)}`).toEqual(raw.quantities.map((q) => q.quantity));
        expect(rolled.total, `${meter.name} ${JSON.stringify(variant)}`).toBe(raw.total);
      }
      // Each customer's stored meter: the figure of the events the test sent, written out plainly.
      for (const customer of customers) {
        const mine = sent.filter((event) => event.name === 'use' && ownerOf(event) === customer.id).map((event) => event.metadata.units);
        const expected = meter.aggregation.func === 'count' ? mine.length : meter.aggregation.func === 'sum' ? mine.reduce((a, b) => a + b, 0) : Math.max(...mine);
        const row = await db('customer_meters').where({ customer_id: customer.id, meter_id: meter.id }).first();
        expect(row ? Number(row.consumed_units) : undefined, `${meter.name}, customer ${customer.externalId}`).toBe(expected);
      }
    }
  });
});
