import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { seededRandom } from '../../daemon/testing/fuzz.js';
import { createOrganization, polarSdk } from '../../daemon/testing/v1.js';
import { signUp, type SignedIn } from '../../daemon/testing/auth-client.js';
import { findMetersByIds } from './meters-repository.js';
import { quantityOf } from './partials.js';
import { customerUsage } from './quantities.js';
import { findUsage } from './usage.js';
import type { Aggregation } from './schema.js';
import { until } from '../../daemon/testing/poll.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const sdk = () => polarSdk(daemon.url, owner.token);
const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;


beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Ursula Usage' });
  organizationId = await createOrganization(owner, 'Usage Rows');
});
afterAll(async () => {
  await daemon?.close();
});

describe("customers' usage kept by ingestion", () => {
  it('equals a full aggregation of the events after random batches sent by id and by external id, out of order and duplicated', async () => {
    const external = unique('ext');
    const a = (await sdk().customers.create({ organizationId, email: `${unique('a')}@example.com`, externalId: external })).id;
    const b = (await sdk().customers.create({ organizationId, email: `${unique('b')}@example.com` })).id;
    const use = { conjunction: 'and' as const, clauses: [{ property: 'name', operator: 'eq' as const, value: 'use' }] };
    const aggregations: Aggregation[] = [{ func: 'count' }, { func: 'sum', property: 'units' }, { func: 'max', property: 'units' }, { func: 'min', property: 'units' }, { func: 'avg', property: 'units' }];
    const meterIds: string[] = [];
    for (const aggregation of aggregations) meterIds.push((await sdk().meters.create({ organizationId, name: `Usage ${aggregation.func}`, filter: use, aggregation })).id);
    meterIds.push((await sdk().meters.create({ organizationId, name: 'Gold units', filter: { conjunction: 'and', clauses: [{ property: 'tier', operator: 'eq', value: 'gold' }] }, aggregation: { func: 'sum', property: 'units' } })).id);
    const meters = await findMetersByIds(daemon.db, meterIds);

    // A first event each, then the refresh job gives every row its baseline.
    await sdk().events.ingest({ events: [a, b].map((customerId) => ({ name: 'use', customerId, metadata: { units: 1, tier: 'gold' } })) });
    const whole = async () => {
      const rows = await daemon.db('customer_meter_usage').whereIn('meter_id', meterIds);
      return rows.length === meterIds.length * 2 && rows.every((row) => Number(row.pending) === 0);
    };
    expect(await until(whole, Boolean, 'every usage row to have its baseline')).toBe(true);

    const random = seededRandom(21);
    const sent: string[] = [];
    for (let batch = 0; batch < 25; batch++) {
      const events = Array.from({ length: 1 + random.int(30) }, () => {
        const who = random.int(3);
        const units = random.int(5) === 0 ? 'many' : random.int(151) - 50;
        const externalId = sent.length && random.int(6) === 0 ? random.pick(sent) : unique('e');
        sent.push(externalId);
        return {
          name: random.pick(['use', 'use', 'other']),
          ...(who === 0 ? { customerId: a } : who === 1 ? { externalCustomerId: external } : { customerId: b }),
          externalId,
          // Late and out of order: anywhere in the last ten days.
          timestamp: new Date(Date.now() - random.int(10 * 24 * 3600) * 1000),
          metadata: (random.int(4) === 0 ? { tier: random.pick(['gold', 'silver']) } : { units, tier: random.pick(['gold', 'silver']) }) as Record<string, string | number>,
        };
      });
      await sdk().events.ingest({ events });
    }

    for (const meter of meters) {
      for (const customer of [{ id: a, externalId: external }, { id: b, externalId: null }]) {
        const usage = await findUsage(daemon.db, meter.id, customer.id);
        // Kept whole by the ingests alone: never rebuilt from the events since the baseline.
        expect(usage?.pending, `${meter.name} ${customer.id}`).toBe(false);
        const full = await customerUsage(daemon.db, meter, customer, {});
        expect(quantityOf(meter.aggregation, usage!.partial), `${meter.name} ${customer.id}`).toBeCloseTo(full.quantity, 9);
        expect(usage!.partial.events).toBe(full.events);
      }
    }
  }, 120_000);

  it("reflects an ingest in the customer's meter at once, and stores it and announces customer.state_changed soon after", async () => {
    const customer = (await sdk().customers.create({ organizationId, email: `${unique('f')}@example.com` })).id;
    const meter = await sdk().meters.create({ organizationId, name: 'Fresh', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'fresh' }] }, aggregation: { func: 'sum', property: 'n' } });
    await sdk().events.ingest({ events: [{ name: 'fresh', customerId: customer, metadata: { n: 2 } }] });
    const stored = async () => (await daemon.db('customer_meters').where({ customer_id: customer, meter_id: meter.id }).first()) as Record<string, unknown> | undefined;
    expect(Number((await until(stored, (row) => Number(row?.consumed_units) === 2, 'the meter to be stored'))?.consumed_units)).toBe(2);
    const id = String((await stored())!.id);

    await sdk().events.ingest({ events: [{ name: 'fresh', customerId: customer, metadata: { n: 5 } }] });
    // The API answers from the usage rows the ingest itself updated.
    expect(await sdk().customerMeters.get({ id })).toMatchObject({ consumedUnits: 7, balance: -7 });
    expect(Number((await until(stored, (row) => Number(row?.consumed_units) === 7, 'the second ingest to be stored'))?.consumed_units)).toBe(7);
    const announced = async () =>
      (await daemon.db('webhook_events').where({ organization_id: organizationId, type: 'customer.state_changed' })).filter((row) => (typeof row.payload === 'string' ? row.payload : JSON.stringify(row.payload)).includes('"consumed_units":7'));
    expect((await until(announced, (rows) => rows.length > 0, 'customer.state_changed')).length).toBeGreaterThan(0);
  });

  it("announces customer.state_changed with the customer's state as GET /v1/customers/{id}/state reads it", async () => {
    const customer = (await sdk().customers.create({ organizationId, email: `${unique('s')}@example.com` })).id;
    const filter = { conjunction: 'and' as const, clauses: [{ property: 'name', operator: 'eq' as const, value: 'stated' }] };
    await sdk().meters.create({ organizationId, name: 'Stated calls', filter, aggregation: { func: 'count' } });
    await sdk().meters.create({ organizationId, name: 'Stated units', filter, aggregation: { func: 'sum', property: 'n' } });
    await sdk().events.ingest({ events: [{ name: 'stated', customerId: customer, metadata: { n: 3 } }] });
    await sdk().events.ingest({ events: [{ name: 'stated', customerId: customer, metadata: { n: 4 } }] });
    const announced = async () =>
      (await daemon.db('webhook_events').where({ organization_id: organizationId, type: 'customer.state_changed' }).orderBy('seq'))
        .map((row) => (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as { data: { id: string; active_meters: { consumed_units: number }[] } })
        .filter((payload) => payload.data.id === customer && payload.data.active_meters.some((meter) => meter.consumed_units === 7));
    const [payload] = await until(announced, (payloads) => payloads.length > 0, 'customer.state_changed');
    expect(payload).toBeDefined();
    const res = await fetch(`${daemon.url}/v1/customers/${customer}/state`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(res.status).toBe(200);
    const state = (await res.json()) as { active_meters: { meter_id: string }[] };
    // Meters made by the same refresh share their created_at, so either order is the state's.
    const byMeter = (value: { active_meters: { meter_id: string }[] }) => ({ ...value, active_meters: [...value.active_meters].sort((x, y) => (x.meter_id < y.meter_id ? -1 : 1)) });
    expect(byMeter(payload.data as unknown as { active_meters: { meter_id: string }[] })).toEqual(byMeter(state));
  });

  it('stores and announces the meters of every customer one batch touched', async () => {
    const customers: string[] = [];
    for (let i = 0; i < 7; i++) customers.push((await sdk().customers.create({ organizationId, email: `${unique('m')}@example.com` })).id);
    const meter = await sdk().meters.create({ organizationId, name: 'Many', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'many' }] }, aggregation: { func: 'sum', property: 'n' } });
    await sdk().events.ingest({ events: customers.flatMap((customerId, i) => [{ name: 'many', customerId, metadata: { n: i + 1 } }, { name: 'many', customerId, metadata: { n: 10 } }]) });
    const stored = async () => new Map((await daemon.db('customer_meters').where({ meter_id: meter.id })).map((row) => [String(row.customer_id), Number(row.consumed_units)]));
    const expected = new Map(customers.map((customerId, i) => [customerId, i + 11]));
    expect(await until(stored, (rows) => customers.every((id) => rows.get(id) === expected.get(id)), "every customer's meter")).toEqual(expected);
    const announced = async () => {
      const seen = new Set<string>();
      for (const row of await daemon.db('webhook_events').where({ organization_id: organizationId, type: 'customer.state_changed' })) {
        const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as { data: { id: string; active_meters: { meter_id: string; consumed_units: number }[] } };
        if (payload.data.active_meters.some((m) => m.meter_id === meter.id && m.consumed_units === expected.get(payload.data.id))) seen.add(payload.data.id);
      }
      return seen;
    };
    expect([...(await until(announced, (seen) => seen.size === customers.length, "every customer's customer.state_changed"))].sort()).toEqual([...customers].sort());
  });

  it('counts the events sent with an external id before its customer existed, once a customer takes that external id', async () => {
    const external = unique('later');
    const meter = await sdk().meters.create({ organizationId, name: 'Before', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'early' }] }, aggregation: { func: 'count' } });
    await sdk().events.ingest({ events: [1, 2, 3].map(() => ({ name: 'early', externalCustomerId: external })) });
    const customer = (await sdk().customers.create({ organizationId, email: `${unique('l')}@example.com`, externalId: external })).id;
    await sdk().events.ingest({ events: [{ name: 'early', customerId: customer }] });
    const list = async () => (await sdk().customerMeters.list({ customerId: customer, meterId: meter.id })).result.items;
    expect(await until(list, (items) => items[0]?.consumedUnits === 4, 'the early events to count')).toMatchObject([{ consumedUnits: 4 }]);
    expect(await findUsage(daemon.db, meter.id, customer)).toMatchObject({ pending: false, partial: { events: 4 } });
  });

  // Last: it stops the background refreshes, which would rebuild a pending row (a customer's first refresh makes its rows).
  it("makes a customer's usage whole at its first events, and leaves pending a customer's with earlier events or an external id", async () => {
    await daemon.stopBackground();
    const newcomer = (await sdk().customers.create({ organizationId, email: `${unique('n')}@example.com` })).id;
    const named = (await sdk().customers.create({ organizationId, email: `${unique('x')}@example.com`, externalId: unique('named') })).id;
    const veteran = (await sdk().customers.create({ organizationId, email: `${unique('v')}@example.com` })).id;
    // The veteran's first event came before the meter: it has no row of the meter until its next event makes one.
    await sdk().events.ingest({ events: [{ name: 'unmetered', customerId: veteran }] });
    const meter = await sdk().meters.create({ organizationId, name: 'First', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'first' }] }, aggregation: { func: 'sum', property: 'n' } });
    const [meterOfFirst] = await findMetersByIds(daemon.db, [meter.id]);

    await sdk().events.ingest({ events: [newcomer, named, veteran].map((customerId) => ({ name: 'first', customerId, metadata: { n: 2 } })) });
    await sdk().events.ingest({ events: [{ name: 'first', customerId: newcomer, metadata: { n: 3 } }] });

    // Nothing of the newcomer's was stored before its first batch: its row holds all of its events without a rebuild.
    expect(await findUsage(daemon.db, meter.id, newcomer)).toMatchObject({ pending: false, sinceMs: 0, partial: { events: 2 } });
    const full = await customerUsage(daemon.db, meterOfFirst!, { id: newcomer, externalId: null }, {});
    expect(quantityOf(meterOfFirst!.aggregation, (await findUsage(daemon.db, meter.id, newcomer))!.partial)).toBe(full.quantity);
    expect(full.quantity).toBe(5);
    // Events may have named the external id before the customer had it; the veteran has events from before the row.
    expect(await findUsage(daemon.db, meter.id, named)).toMatchObject({ pending: true });
    expect(await findUsage(daemon.db, meter.id, veteran)).toMatchObject({ pending: true });
  });
});
