import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { createOrganization, polarSdk } from '../../daemon/testing/v1.js';
import { signUp, type SignedIn } from '../../daemon/testing/auth-client.js';
import { fixedClock } from '../clock.js';
import { applyRefresh, planRefresh } from './customer-meters.js';
import { refreshedCustomerMeter } from './testing.js';
import { until } from '../../daemon/testing/poll.js';

// A refresh run reads its customers' rows outside any transaction, then writes and announces the changed ones in one
// (core/metering/customer-meters.ts, refreshCustomers).

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const sdk = () => polarSdk(daemon.url, owner.token);
const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;


/** Each customer.state_changed of these customers recorded so far: the customer and its units on `meterId`. */
async function announcements(customers: readonly string[], meterId: string, organization = organizationId): Promise<{ customer: string; units: number | undefined }[]> {
  const rows = await daemon.db('webhook_events').where({ organization_id: organization, type: 'customer.state_changed' }).orderBy('seq');
  return rows
    .map((row) => (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as { data: { id: string; active_meters: { meter_id: string; consumed_units: number }[] } })
    .filter((payload) => customers.includes(payload.data.id))
    .map((payload) => ({ customer: payload.data.id, units: payload.data.active_meters.find((m) => m.meter_id === meterId)?.consumed_units }));
}

/** Customers with a `sum(n)` meter of their own name, each with a first event whose refresh gave it whole usage and a stored row. */
async function customersWithMeters(count: number, name: string, options: { background?: boolean } = {}): Promise<{ customers: string[]; meterId: string }> {
  const customers: string[] = [];
  for (let i = 0; i < count; i++) customers.push((await sdk().customers.create({ organizationId, email: `${unique(name)}@example.com` })).id);
  const meter = await sdk().meters.create({ organizationId, name, filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: name }] }, aggregation: { func: 'sum', property: 'n' } });
  await sdk().events.ingest({ events: customers.map((customerId) => ({ name, customerId, metadata: { n: 1 } })) });
  // With the background refreshes stopped, the first refresh is run here.
  if (options.background === false) for (const customerId of customers) await refreshedCustomerMeter(daemon.db, organizationId, customerId, meter.id);
  const stored = async () => (await daemon.db('customer_meters').where({ meter_id: meter.id })).filter((row) => Number(row.consumed_units) === 1).length;
  expect(await until(stored, (n) => n === count, 'the first refresh')).toBe(count);
  return { customers, meterId: meter.id };
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Rhea Refresh' });
  organizationId = await createOrganization(owner, 'Refresh Runs');
});
afterAll(async () => {
  await daemon?.close();
});

describe("a refresh run's customers", () => {
  it('are stored and announced once each with their new figures, and a customer whose meters did not change is not announced', async () => {
    const { customers, meterId } = await customersWithMeters(6, 'together');
    const before = (await announcements(customers, meterId)).length;

    // Five customers use the meter again; the sixth sends an event no meter counts.
    const [still, ...used] = customers;
    await sdk().events.ingest({ events: [...used.map((customerId, i) => ({ name: 'together', customerId, metadata: { n: 10 + i } })), { name: 'unmetered', customerId: still!, metadata: { n: 5 } }] });

    const stored = async () => new Map((await daemon.db('customer_meters').where({ meter_id: meterId })).map((row) => [String(row.customer_id), Number(row.consumed_units)]));
    const expected = new Map([[still!, 1], ...used.map((customerId, i) => [customerId, 11 + i] as const)]);
    expect(await until(stored, (rows) => used.every((id) => rows.get(id) === expected.get(id)), 'the new figures to be stored')).toEqual(expected);
    const after = await until(
      async () => (await announcements(customers, meterId)).slice(before),
      (list) => list.length >= used.length,
      'the announcements',
    );
    expect(after.map((a) => a.customer).sort()).toEqual([...used].sort());
    for (const { customer, units } of after) expect(units).toBe(expected.get(customer));
  });

  it("are announced with each customer's state as GET /v1/customers/{id}/state reads it, subscriptions and benefits included", async () => {
    const { customers, meterId } = await customersWithMeters(3, 'stated');
    // Two of them subscribe to a free plan that grants a benefit; the third has neither.
    const plan = await sdk().products.create({ organizationId, name: 'Free plan', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 0 }] });
    const note = await sdk().benefits.create({ organizationId, type: 'custom', description: 'Community access', properties: { note: 'Join the forum' } });
    await sdk().products.updateBenefits({ id: plan.id, productBenefitsUpdate: { benefits: [note.id] } });
    for (const customerId of customers.slice(0, 2)) await sdk().subscriptions.create({ productId: plan.id, customerId });
    const granted = async () => (await daemon.db('benefit_grants').whereIn('customer_id', customers).whereNotNull('granted_at')).length;
    expect(await until(granted, (n) => n === 2, 'the grants')).toBe(2);

    await sdk().events.ingest({ events: customers.map((customerId) => ({ name: 'stated', customerId, metadata: { n: 8 } })) });
    const last = async () => {
      const rows = await daemon.db('webhook_events').where({ organization_id: organizationId, type: 'customer.state_changed' }).orderBy('seq');
      const byCustomer = new Map<string, { active_meters: { meter_id: string; consumed_units: number }[] }>();
      for (const row of rows) {
        const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as { data: { id: string; active_meters: { meter_id: string; consumed_units: number }[] } };
        if (customers.includes(payload.data.id)) byCustomer.set(payload.data.id, payload.data);
      }
      return byCustomer;
    };
    const announced = await until(last, (states) => customers.every((id) => states.get(id)?.active_meters.find((m) => m.meter_id === meterId)?.consumed_units === 9), 'the announced states');
    for (const customerId of customers) {
      const res = await fetch(`${daemon.url}/v1/customers/${customerId}/state`, { headers: { authorization: `Bearer ${owner.token}` } });
      expect(res.status).toBe(200);
      expect(announced.get(customerId)).toEqual(await res.json());
    }
    expect((announced.get(customers[0]!) as unknown as { active_subscriptions: unknown[]; granted_benefits: unknown[] }).active_subscriptions).toHaveLength(1);
    expect((announced.get(customers[0]!) as unknown as { granted_benefits: unknown[] }).granted_benefits).toHaveLength(1);
  });

  it('leave a customer whose stored figures another refresh changed after they were read to a refresh of its own, and write the others', async () => {
    const { customers, meterId } = await customersWithMeters(3, 'raced');
    const [raced, ...others] = customers as [string, ...string[]];
    // The background refreshes stop: this test runs the two steps of a run itself, with another refresh between them.
    await daemon.stopBackground();
    const before = (await announcements(customers, meterId)).length;
    await sdk().events.ingest({ events: customers.map((customerId) => ({ name: 'raced', customerId, metadata: { n: 4 } })) });

    const plan = await planRefresh(daemon.db, organizationId, customers);
    expect(plan.alone).toEqual([]);
    expect(plan.changed.map(({ customer }) => customer.id).sort()).toEqual([...customers].sort());
    // Another daemon's refresh of one of them, between the read and the write.
    await refreshedCustomerMeter(daemon.db, organizationId, raced, meterId);
    const racedRow = await daemon.db('customer_meters').where({ customer_id: raced, meter_id: meterId }).first();

    const left = await daemon.db.transaction((trx) => applyRefresh(trx, fixedClock(new Date()), plan.changed));

    expect(left).toEqual([raced]);
    expect(await daemon.db('customer_meters').where({ customer_id: raced, meter_id: meterId }).first()).toEqual(racedRow);
    for (const customer of others) expect(Number((await daemon.db('customer_meters').where({ customer_id: customer, meter_id: meterId }).first()).consumed_units)).toBe(5);
    const announced = (await announcements(customers, meterId)).slice(before);
    expect(announced.map((a) => a.customer).sort()).toEqual([...others].sort());
    for (const { units } of announced) expect(units).toBe(5);
  });
  it("write new customers' first figures together, and leave a customer whose row another refresh inserted meanwhile to a refresh of its own", async () => {
    await daemon.stopBackground();
    // An organization of its own (and an owner: an ingest names no organization): the other tests' meters, on which
    // these customers have no usage, would have them refreshed alone.
    const firstOwner = await signUp(daemon.url, { name: 'Fia First' });
    const organizationId = await createOrganization(firstOwner, 'First Figures');
    const sdk = () => polarSdk(daemon.url, firstOwner.token);
    const customers: string[] = [];
    for (let i = 0; i < 3; i++) customers.push((await sdk().customers.create({ organizationId, email: `${unique('first')}@example.com` })).id);
    const meter = await sdk().meters.create({ organizationId, name: 'first', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'first' }] }, aggregation: { func: 'sum', property: 'n' } });
    const [raced, ...others] = customers as [string, ...string[]];
    const before = (await announcements(customers, meter.id, organizationId)).length;
    await sdk().events.ingest({ events: customers.map((customerId) => ({ name: 'first', customerId, metadata: { n: 2 } })) });

    const plan = await planRefresh(daemon.db, organizationId, customers);
    expect(plan.alone).toEqual([]);
    expect(plan.changed).toHaveLength(3);
    expect(await daemon.db('customer_meters').where({ meter_id: meter.id })).toEqual([]);
    // Another daemon's refresh of one of them, between the read and the write, stores its first row.
    await refreshedCustomerMeter(daemon.db, organizationId, raced, meter.id);
    const racedRow = await daemon.db('customer_meters').where({ customer_id: raced, meter_id: meter.id }).first();

    const left = await daemon.db.transaction((trx) => applyRefresh(trx, fixedClock(new Date()), plan.changed));

    expect(left).toEqual([raced]);
    expect(await daemon.db('customer_meters').where({ customer_id: raced, meter_id: meter.id })).toEqual([racedRow]);
    for (const customer of others) expect(Number((await daemon.db('customer_meters').where({ customer_id: customer, meter_id: meter.id }).first()).consumed_units)).toBe(2);
    const announced = (await announcements(customers, meter.id, organizationId)).slice(before).filter((a) => a.units !== undefined);
    expect(announced.map((a) => a.customer).sort()).toEqual([...others].sort());
    for (const { units } of announced) expect(units).toBe(2);
  });
  it('leave out a customer deleted after they were read: nothing stored or announced for it', async () => {
    await daemon.stopBackground();
    const { customers, meterId } = await customersWithMeters(2, 'deleted', { background: false });
    const [gone, kept] = customers as [string, string];
    const before = (await announcements(customers, meterId)).length;
    await sdk().events.ingest({ events: customers.map((customerId) => ({ name: 'deleted', customerId, metadata: { n: 6 } })) });

    const plan = await planRefresh(daemon.db, organizationId, customers);
    expect(plan.changed).toHaveLength(2);
    await sdk().customers.delete({ id: gone });
    const left = await daemon.db.transaction((trx) => applyRefresh(trx, fixedClock(new Date()), plan.changed));

    expect(left).toEqual([]);
    expect(Number((await daemon.db('customer_meters').where({ customer_id: gone, meter_id: meterId }).first()).consumed_units)).toBe(1);
    expect(Number((await daemon.db('customer_meters').where({ customer_id: kept, meter_id: meterId }).first()).consumed_units)).toBe(7);
    const announced = (await announcements(customers, meterId)).slice(before).filter((a) => a.units !== undefined);
    expect(announced).toEqual([{ customer: kept, units: 7 }]);
  });
  it('read a new customer whose first events no meter counts from whole, empty usage rows, instead of rebuilding it from its events alone', async () => {
    await daemon.stopBackground();
    const emptyOwner = await signUp(daemon.url, { name: 'Ezra Empty' });
    const organizationId = await createOrganization(emptyOwner, 'Empty Rows');
    const sdk = () => polarSdk(daemon.url, emptyOwner.token);
    const customerId = (await sdk().customers.create({ organizationId, email: `${unique('empty')}@example.com` })).id;
    const counted = { conjunction: 'and' as const, clauses: [{ property: 'name', operator: 'eq' as const, value: 'counted' }] };
    const sum = await sdk().meters.create({ organizationId, name: 'Counted units', filter: counted, aggregation: { func: 'sum', property: 'n' } });
    const count = await sdk().meters.create({ organizationId, name: 'Counted calls', filter: counted, aggregation: { func: 'count' } });
    await sdk().events.ingest({ events: [{ name: 'ignored', customerId, metadata: { n: 3 } }] });

    const rows = await daemon.db('customer_meter_usage').where({ customer_id: customerId }).orderBy('meter_id');
    expect(rows.map((row) => [row.meter_id, Number(row.events), Number(row.pending)])).toEqual([[sum.id, 0, 0], [count.id, 0, 0]].sort(([a], [b]) => String(a).localeCompare(String(b))));
    expect((await planRefresh(daemon.db, organizationId, [customerId])).alone).toEqual([]);

    // Its later events add to those rows: still whole, and its figures read from them.
    await sdk().events.ingest({ events: [{ name: 'counted', customerId, metadata: { n: 4 } }, { name: 'counted', customerId, metadata: { n: 5 } }] });
    const plan = await planRefresh(daemon.db, organizationId, [customerId]);
    expect(plan.alone).toEqual([]);
    expect(plan.changed[0]!.figures.map(({ meter, balance }) => [meter.id, balance.consumedUnits])).toEqual([
      [sum.id, 9],
      [count.id, 2],
    ]);
  });
});
