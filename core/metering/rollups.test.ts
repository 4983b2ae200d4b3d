import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { seededRandom } from '../../daemon/testing/fuzz.js';
import { createOrganization, polarSdk } from '../../daemon/testing/v1.js';
import { signUp, type SignedIn } from '../../daemon/testing/auth-client.js';
import { bucketsBetween } from './buckets.js';
import { findMetersByIds } from './meters-repository.js';
import { meterQuantities, type QuantitiesQuery } from './quantities.js';
import type { Aggregation, AggregationFunction, Meter, TimeInterval } from './schema.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const sdk = () => polarSdk(daemon.url, owner.token);
const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Rollo Rollup' });
  organizationId = await createOrganization(owner, 'Rollups');
});
afterAll(async () => {
  await daemon?.close();
});

async function whole(meterIds: readonly string[]): Promise<boolean> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const rows = await daemon.db('meter_rollup_states').whereIn('meter_id', meterIds).where({ status: 'ready' });
    if (rows.length === meterIds.length) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** An event as the test sent it, and the customer it belongs to (resolved the plain way, after the fact). */
interface Sent {
  name: string;
  customerId?: string;
  externalCustomerId?: string;
  timestamp: number;
  metadata: Record<string, string | number>;
}

/** The reference: the meter's aggregation written out over the accepted events, bucket by bucket. */
function reference(meter: Meter, events: readonly Sent[], owner: (event: Sent) => string, query: QuantitiesQuery, matches: (event: Sent) => boolean) {
  const buckets = bucketsBetween(query.start, query.end, query.interval, query.timezone, 10_000)!;
  const aggregate = (func: AggregationFunction, picked: readonly Sent[]): number | null => {
    const values = picked.map((event) => event.metadata.units).filter((value): value is number => typeof value === 'number');
    switch (func) {
      case 'count':
        return picked.length;
      case 'sum':
        return values.reduce((sum, value) => sum + value, 0);
      case 'max':
        return values.length ? Math.max(...values) : null;
      case 'min':
        return values.length ? Math.min(...values) : null;
      case 'avg':
        return values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : null;
      default:
        throw new Error(func);
    }
  };
  const wanted = (event: Sent) => matches(event) && (!query.customerIds || query.customerIds.includes(owner(event)));
  const figure = (picked: readonly Sent[]) => {
    if (!query.customerAggregationFunction) return aggregate(meter.aggregation.func, picked) ?? 0;
    const byCustomer = new Map<string, Sent[]>();
    for (const event of picked) byCustomer.set(owner(event), [...(byCustomer.get(owner(event)) ?? []), event]);
    const figures = [...byCustomer.values()].map((mine) => aggregate(meter.aggregation.func, mine)).filter((value): value is number => value !== null);
    const values = figures.map((value) => ({ metadata: { units: value } }) as unknown as Sent);
    return query.customerAggregationFunction === 'count' ? figures.length : (aggregate(query.customerAggregationFunction, values) ?? 0);
  };
  const inRange = (event: Sent, from: number, to: number) => event.timestamp >= from && event.timestamp < to && wanted(event);
  return {
    quantities: buckets.map((bucket) => figure(events.filter((event) => inRange(event, bucket.from, bucket.to)))),
    total: figure(events.filter((event) => inRange(event, buckets[0]!.from, buckets[buckets.length - 1]!.to))),
  };
}

describe('meter rollups', () => {
  it('answer the same quantities as a plain aggregation of random streams (out of order, duplicated, late, by id and external id), also for a meter created after its events', async () => {
    const externalA = unique('a');
    const externalLate = unique('late');
    const a = (await sdk().customers.create({ organizationId, email: `${unique('a')}@example.com`, externalId: externalA })).id;
    const b = (await sdk().customers.create({ organizationId, email: `${unique('b')}@example.com` })).id;
    let late: string | undefined;
    const use = { conjunction: 'and' as const, clauses: [{ property: 'name', operator: 'eq' as const, value: 'use' }] };
    const aggregations: Aggregation[] = [{ func: 'count' }, { func: 'sum', property: 'units' }, { func: 'max', property: 'units' }, { func: 'min', property: 'units' }, { func: 'avg', property: 'units' }];
    const early: string[] = [];
    for (const aggregation of aggregations) early.push((await sdk().meters.create({ organizationId, name: `Rolled ${aggregation.func}`, filter: use, aggregation })).id);
    expect(await whole(early)).toBe(true);

    const random = seededRandom(2121);
    const now = Date.now();
    const accepted: Sent[] = [];
    const seen = new Set<string>();
    for (let batch = 0; batch < 12; batch++) {
      if (batch === 6) late = (await sdk().customers.create({ organizationId, email: `${unique('l')}@example.com`, externalId: externalLate })).id;
      const events = Array.from({ length: 1 + random.int(40) }, () => {
        const who = random.int(4);
        const externalId = seen.size && random.int(5) === 0 ? random.pick([...seen]) : unique('e');
        const event: Sent & { externalId: string } = {
          name: random.pick(['use', 'use', 'use', 'other']),
          ...(who === 0 ? { customerId: a } : who === 1 ? { externalCustomerId: externalA } : who === 2 ? { customerId: b } : late && random.int(2) ? { customerId: late } : { externalCustomerId: externalLate }),
          externalId,
          // Anywhere in the last five days, to the millisecond: out of order and late.
          timestamp: now - random.int(5 * 24 * 3600 * 1000),
          metadata: random.int(5) === 0 ? { tier: 'gold' } : { units: random.int(201) - 100, tier: random.pick(['gold', 'silver']) },
        };
        return event;
      });
      for (const event of events) {
        if (seen.has(event.externalId)) continue;
        seen.add(event.externalId);
        accepted.push(event);
      }
      await sdk().events.ingest({ events: events.map(({ timestamp, ...event }) => ({ ...event, timestamp: new Date(timestamp) })) as Parameters<ReturnType<typeof sdk>['events']['ingest']>[0]['events'] });
    }
    // Created after its events: backfilled from them.
    const gold = (await sdk().meters.create({ organizationId, name: 'Gold units', filter: { conjunction: 'and', clauses: [{ property: 'tier', operator: 'eq', value: 'gold' }] }, aggregation: { func: 'sum', property: 'units' } })).id;
    expect(await whole([gold])).toBe(true);

    const owner = (event: Sent) => event.customerId ?? (event.externalCustomerId === externalA ? a : event.externalCustomerId === externalLate ? late! : event.externalCustomerId!);
    const meters = await findMetersByIds(daemon.db, [...early, gold]);
    const start = new Date(now - 5 * 24 * 3600 * 1000 + 17 * 60 * 1000);
    const end = new Date(now);
    let compared = 0;
    for (const meter of meters) {
      const matches = meter.id === gold ? (event: Sent) => event.metadata.tier === 'gold' : (event: Sent) => event.name === 'use';
      for (const interval of ['hour', 'day', 'month'] as TimeInterval[]) {
        for (const timezone of ['America/New_York', 'Asia/Kolkata']) {
          const variants: Partial<QuantitiesQuery>[] = [{}, { customerIds: [a] }, { externalCustomerIds: [externalLate] }, { customerAggregationFunction: 'max' }];
          for (const variant of variants) {
            const query: QuantitiesQuery = { start, end, interval, timezone, ...variant };
            const expected = reference(meter, accepted, owner, { ...query, ...(variant.externalCustomerIds ? { customerIds: [late!] } : {}) }, matches);
            for (const source of ['rollups', 'events'] as const) {
              const got = await meterQuantities(daemon.db, meter, query, { source });
              const label = `${meter.name} ${interval} ${timezone} ${JSON.stringify(variant)} from ${source}`;
              expect(got.quantities.length, label).toBe(expected.quantities.length);
              got.quantities.forEach((bucket, i) => expect(bucket.quantity, `${label} bucket ${i}`).toBeCloseTo(expected.quantities[i]!, 6));
              expect(got.total, label).toBeCloseTo(expected.total, 6);
              compared++;
            }
          }
        }
      }
    }
    expect(compared).toBe(6 * 3 * 2 * 4 * 2);
  }, 240_000);

  it('backfills a meter created after more events than one backfill chunk takes, counting each event once across chunks', async () => {
    const organization = await createOrganization(owner, 'Backfill chunks');
    const customers: string[] = [];
    for (let i = 0; i < 3; i++) customers.push((await sdk().customers.create({ organizationId: organization, email: `${unique('bulk')}@example.com` })).id);
    const random = seededRandom(5252);
    const now = Date.now();
    // 10,000 events: exactly two chunks of 5,000, so the run after the second full chunk finds none left.
    for (let batch = 0; batch < 4; batch++) {
      const events = Array.from({ length: 2500 }, (_, i) => ({
        name: random.int(10) === 0 ? 'other' : 'bulk',
        customerId: customers[random.int(3)]!,
        organizationId: organization,
        externalId: `bulk-${batch}-${i}`,
        timestamp: new Date(now - random.int(3 * 24 * 3600 * 1000)),
        metadata: { units: random.int(50) },
      }));
      await sdk().events.ingest({ events });
    }
    const bulk = { conjunction: 'and' as const, clauses: [{ property: 'name', operator: 'eq' as const, value: 'bulk' }] };
    const meterIds = [
      (await sdk().meters.create({ organizationId: organization, name: 'Bulk count', filter: bulk, aggregation: { func: 'count' } })).id,
      (await sdk().meters.create({ organizationId: organization, name: 'Bulk units', filter: bulk, aggregation: { func: 'sum', property: 'units' } })).id,
    ];
    expect(await whole(meterIds)).toBe(true);
    const meters = await findMetersByIds(daemon.db, meterIds);
    const start = new Date(now - 4 * 24 * 3600 * 1000);
    for (const meter of meters) {
      for (const variant of [{}, { customerIds: [customers[0]!] }] as Partial<QuantitiesQuery>[]) {
        const query: QuantitiesQuery = { start, end: new Date(now), interval: 'day', timezone: 'UTC', ...variant };
        const [rolled, raw] = [await meterQuantities(daemon.db, meter, query, { source: 'rollups' }), await meterQuantities(daemon.db, meter, query, { source: 'events' })];
        expect(rolled.total, `${meter.name} ${JSON.stringify(variant)}`).toBeGreaterThan(0);
        expect(rolled, `${meter.name} ${JSON.stringify(variant)}`).toEqual(raw);
      }
    }
    const [{ n }] = await daemon.db('events').where({ organization_id: organization, name: 'bulk', source: 'user' }).count({ n: '*' });
    const count = meters.find((meter) => meter.aggregation.func === 'count')!;
    expect((await meterQuantities(daemon.db, count, { start, end: new Date(now), interval: 'month', timezone: 'UTC' }, { source: 'rollups' })).total).toBe(Number(n));
  }, 240_000);
});
