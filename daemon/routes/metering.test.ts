import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshedCustomerMeter } from '../../core/metering/testing.js';
import { listEvents } from '../../core/webhooks/outbox.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let customerId: string;

const sdk = () => polarSdk(daemon.url, owner.token);
const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);
const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Mia Meter' });
  organizationId = await createOrganization(owner, 'Usage Co');
  customerId = (await sdk().customers.create({ organizationId, email: `${unique('c')}@example.com`, externalId: 'user-1' })).id;
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/events', () => {
  it('answers 401 Unauthorized to an ingest without credentials', async () => {
    const res = await v1(undefined, 'POST', '/events/ingest', { events: [{ name: 'x', customer_id: customerId }] });
    expect(res.status).toBe(401);
  });

  it('ingests through the SDK, counts duplicates by external_id, and reads the events back', async () => {
    const externalId = unique('evt');
    const first = await sdk().events.ingest({
      events: [
        { name: 'api_call', customerId, externalId, timestamp: new Date('2026-01-05T10:00:00Z'), metadata: { tokens: 12, model: 'small', cached: false } },
        { name: 'api_call', externalCustomerId: 'user-1', metadata: { tokens: 30, model: 'large' }, timestamp: new Date('2026-01-05T11:00:00Z') },
      ],
    });
    expect(first).toEqual({ inserted: 2, duplicates: 0 });
    const again = await sdk().events.ingest({ events: [{ name: 'api_call', customerId, externalId, metadata: { tokens: 99 } }] });
    expect(again).toEqual({ inserted: 0, duplicates: 1 });

    const page = await sdk().events.list({ organizationId, name: 'api_call', startTimestamp: new Date('2026-01-01T00:00:00Z'), endTimestamp: new Date('2026-02-01T00:00:00Z') });
    const items = 'pagination' in page ? page.items : [];
    expect(items.map((e) => e.metadata)).toEqual([
      { tokens: 30, model: 'large' },
      { tokens: 12, model: 'small', cached: false },
    ]);
    // An event sent with the external id belongs to the customer that has it.
    expect(items[0]).toMatchObject({ source: 'user', name: 'api_call', label: 'api_call', externalCustomerId: 'user-1', customer: { id: customerId } });
    const fetched = await sdk().events.get({ id: items[1]!.id });
    expect(fetched).toMatchObject({ id: items[1]!.id, customerId, timestamp: new Date('2026-01-05T10:00:00Z') });

    const names = await sdk().events.listNames({ organizationId });
    expect(names.result.items).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'api_call', source: 'user', occurrences: 2 })]));
  });

  it('refuses a whole batch when one event is invalid, naming its index, and writes nothing', async () => {
    const before = Number((await daemon.db('events').count({ n: '*' }))[0]!.n);
    const cases: [unknown, (string | number)[]][] = [
      [{ name: 'ok', customer_id: customerId }, []],
      [{ customer_id: customerId }, ['body', 'events', 1, 'name']],
      [{ name: 'x'.repeat(129), customer_id: customerId }, ['body', 'events', 1, 'name']],
      [{ name: 'late', customer_id: customerId, timestamp: '2999-01-01T00:00:00Z' }, ['body', 'events', 1, 'timestamp']],
      [{ name: 'naive', customer_id: customerId, timestamp: '2025-01-01T00:00:00' }, ['body', 'events', 1, 'timestamp']],
      [{ name: 'ghost', customer_id: '00000000-0000-4000-8000-000000000000' }, ['body', 'events', 1, 'customer_id']],
      [{ name: 'nobody' }, ['body', 'events', 1, 'customer_id']],
      [{ name: 'nested', customer_id: customerId, metadata: { deep: { a: 1 } } }, ['body', 'events', 1, 'metadata', 'deep']],
      [{ name: 'orphan', customer_id: customerId, parent_id: 'no-such-event' }, ['body', 'events', 1, 'parent_id']],
    ];
    for (const [bad, loc] of cases.slice(1)) {
      const res = await v1(owner.token, 'POST', '/events/ingest', { events: [cases[0]![0], bad] });
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect((await res.json()).detail[0].loc).toEqual(loc);
    }
    expect(Number((await daemon.db('events').count({ n: '*' }))[0]!.n)).toBe(before);
    const sdkError = await sdk().events.ingest({ events: [{ name: 'late', customerId, timestamp: new Date(Date.now() + 86_400_000) }] }).catch((e: unknown) => e);
    expect(sdkError).toBeInstanceOf(HTTPValidationError);
  });

  it('takes a parent by id or by the external id of an event of the same batch', async () => {
    const parent = unique('parent');
    await sdk().events.ingest({ events: [{ name: 'llm.request', customerId, externalId: parent }, { name: 'llm.token', customerId, parentId: parent }] });
    const children = await sdk().events.list({ organizationId, name: 'llm.token' });
    const child = 'pagination' in children ? children.items[0]! : undefined;
    const parentEvent = await sdk().events.get({ id: child!.parentId! });
    expect(parentEvent).toMatchObject({ name: 'llm.request', childCount: 1 });
  });

  it('takes a batch spread over more customers than SQLite allows rows in one insert (500)', async () => {
    const meter = await sdk().meters.create({ organizationId, name: 'Wide', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'wide' }] }, aggregation: { func: 'count' } });
    const timestamp = new Date(Date.now() - 3_600_000).toISOString();
    const events = Array.from({ length: 600 }, (_, i) => ({ name: 'wide', external_customer_id: `wide-${i}`, timestamp }));
    const res = await v1(owner.token, 'POST', '/events/ingest', { events });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ inserted: 600, duplicates: 0 });
    const range = new URLSearchParams({ start_timestamp: new Date(Date.now() - 86_400_000).toISOString(), end_timestamp: new Date().toISOString(), interval: 'day' });
    const quantities = await v1(owner.token, 'GET', `/meters/${meter.id}/quantities?${range}`);
    expect((await quantities.json()).total).toBe(600);
  });

  it('counts a full batch of 10,000 events, written in several statements, once each, duplicates left out', async () => {
    const meter = await sdk().meters.create({ organizationId, name: 'Full batch', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'full' }] }, aggregation: { func: 'sum', property: 'units' } });
    const timestamp = new Date(Date.now() - 3_600_000).toISOString();
    const event = (i: number) => ({ name: 'full', external_customer_id: `full-${i % 40}`, external_id: `full-${i}`, timestamp, metadata: { units: (i % 7) + 1 } });
    // 1,000 of them sent before: the batch's duplicates, spread over both halves of it.
    const before = Array.from({ length: 1000 }, (_, i) => event(i * 10));
    expect(await (await v1(owner.token, 'POST', '/events/ingest', { events: before })).json()).toEqual({ inserted: 1000, duplicates: 0 });
    const res = await v1(owner.token, 'POST', '/events/ingest', { events: Array.from({ length: 10_000 }, (_, i) => event(i)) });
    expect(await res.json()).toEqual({ inserted: 9000, duplicates: 1000 });
    let expected = 0;
    for (let i = 0; i < 10_000; i++) expected += (i % 7) + 1;
    const range = new URLSearchParams({ start_timestamp: new Date(Date.now() - 86_400_000).toISOString(), end_timestamp: new Date().toISOString(), interval: 'hour' });
    const quantities = await (await v1(owner.token, 'GET', `/meters/${meter.id}/quantities?${range}`)).json();
    expect(quantities.total).toBe(expected);
  });

  it('accepts a body above the general limit, up to 10 MiB, on ingest only', async () => {
    const events = Array.from({ length: 4000 }, (_, i) => ({ name: 'bulk', customer_id: customerId, metadata: { pad: 'x'.repeat(400), i } }));
    const res = await v1(owner.token, 'POST', '/events/ingest', { events });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ inserted: 4000, duplicates: 0 });
    const huge = await v1(owner.token, 'POST', '/events/ingest', { events: [{ name: 'big', customer_id: customerId, metadata: { pad: 'x'.repeat(11 * 1024 * 1024) } }] });
    expect(huge.status).toBe(413);
  });
});

describe('/v1/meters', () => {
  it('answers 401 Unauthorized without credentials', async () => {
    expect((await v1(undefined, 'GET', '/meters/')).status).toBe(401);
  });

  it('creates, reads, lists and updates a meter through the SDK, with nested filters', async () => {
    const created = await sdk().meters.create({
      organizationId,
      name: 'Large tokens',
      filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api_call' }, { conjunction: 'or', clauses: [{ property: 'metadata.model', operator: 'eq', value: 'large' }, { property: 'tokens', operator: 'gt', value: 20 }] }] },
      aggregation: { func: 'sum', property: 'metadata.tokens' },
      metadata: { team: 'ai' },
    });
    expect(created).toMatchObject({ name: 'Large tokens', unit: 'scalar', aggregation: { func: 'sum', property: 'tokens' }, organizationId, archivedAt: null, modifiedAt: null });
    expect(await sdk().meters.get({ id: created.id })).toMatchObject({ id: created.id, filter: created.filter });
    const list = await sdk().meters.list({ organizationId, query: 'large' });
    expect(list.result.items.map((m) => m.id)).toEqual([created.id]);
    const updated = await sdk().meters.update({ id: created.id, meterUpdate: { name: 'Big tokens' } });
    expect(updated).toMatchObject({ name: 'Big tokens' });
    expect(updated.modifiedAt).not.toBeNull();
  });

  it('refuses invalid filters and aggregations with 422 and the field', async () => {
    const bad = [
      [{ name: 'Bad op', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'regex', value: 'x' }] }, aggregation: { func: 'count' } }, 'filter'],
      [{ name: 'Bad agg', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'sum', property: 'name' } }, 'aggregation'],
      [{ name: 'Bad agg', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'median', property: 'tokens' } }, 'aggregation'],
    ] as const;
    for (const [body, field] of bad) {
      const res = await v1(owner.token, 'POST', '/meters/', { ...body, organization_id: organizationId });
      expect(res.status).toBe(422);
      expect((await res.json()).detail[0].loc.slice(0, 2)).toEqual(['body', field]);
    }
  });

  it('answers quantities per day and in total from the database, for one customer or all', async () => {
    const other = (await sdk().customers.create({ organizationId, email: `${unique('o')}@example.com` })).id;
    const meter = await sdk().meters.create({
      organizationId,
      name: 'Render minutes',
      filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'render' }] },
      aggregation: { func: 'sum', property: 'minutes' },
    });
    const at = (day: number, hour: number) => new Date(Date.UTC(2026, 2, day, hour));
    await sdk().events.ingest({
      events: [
        { name: 'render', customerId, timestamp: at(1, 1), metadata: { minutes: 5 } },
        { name: 'render', customerId, timestamp: at(1, 23), metadata: { minutes: 7 } },
        { name: 'render', customerId: other, timestamp: at(3, 12), metadata: { minutes: 100 } },
        { name: 'render', externalCustomerId: 'user-1', timestamp: at(3, 13), metadata: { minutes: 1 } },
        { name: 'other', customerId, timestamp: at(2, 12), metadata: { minutes: 1000 } },
      ],
    });
    const all = await sdk().meters.quantities({ id: meter.id, startTimestamp: at(1, 0), endTimestamp: at(3, 23), interval: 'day' });
    expect(all.quantities.map((q) => [q.timestamp.toISOString(), q.quantity])).toEqual([
      ['2026-03-01T00:00:00.000Z', 12],
      ['2026-03-02T00:00:00.000Z', 0],
      ['2026-03-03T00:00:00.000Z', 101],
    ]);
    expect(all.total).toBe(113);
    const mine = await sdk().meters.quantities({ id: meter.id, startTimestamp: at(1, 0), endTimestamp: at(3, 23), interval: 'day', customerId });
    expect(mine.total).toBe(13);
    // In New York, 23:00 UTC on March 1st is still the evening of the 1st, and 01:00 UTC the evening of February 28th.
    const local = await sdk().meters.quantities({ id: meter.id, startTimestamp: at(1, 0), endTimestamp: at(1, 23), interval: 'day', timezone: 'America/New_York' });
    expect(local.quantities.map((q) => [q.timestamp.toISOString(), q.quantity])).toEqual([
      ['2026-02-28T05:00:00.000Z', 5],
      ['2026-03-01T05:00:00.000Z', 7],
    ]);
    const perCustomerMax = await v1(owner.token, 'GET', `/meters/${meter.id}/quantities?start_timestamp=2026-03-01T00:00:00Z&end_timestamp=2026-03-03T23:00:00Z&interval=month&customer_aggregation_function=max`);
    expect((await perCustomerMax.json()).total).toBe(100);
    const bad = await sdk().meters.quantities({ id: meter.id, startTimestamp: at(1, 0), endTimestamp: at(3, 0), interval: 'day', timezone: 'Mars/Olympus' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(HTTPValidationError);
    const missing = await sdk().meters.quantities({ id: '00000000-0000-4000-8000-000000000000', startTimestamp: at(1, 0), endTimestamp: at(3, 0), interval: 'day' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ResourceNotFound);
  });

  it('reads events sent with customer_id and with external_customer_id as one customer everywhere, also those sent before the customer existed', async () => {
    const external = unique('same');
    const meter = await sdk().meters.create({ organizationId, name: 'One customer', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'ident' }] }, aggregation: { func: 'count' } });
    const at = (hour: number) => new Date(Date.UTC(2026, 3, 1, hour));
    await sdk().events.ingest({ events: [1, 2].map((hour) => ({ name: 'ident', externalCustomerId: external, timestamp: at(hour) })) });
    const customer = (await sdk().customers.create({ organizationId, email: `${unique('i')}@example.com`, externalId: external })).id;
    await sdk().events.ingest({ events: [{ name: 'ident', customerId: customer, timestamp: at(3) }] });

    const byId = await sdk().events.list({ organizationId, name: 'ident', customerId: customer });
    const byExternal = await sdk().events.list({ organizationId, name: 'ident', externalCustomerId: external });
    for (const page of [byId, byExternal]) expect('pagination' in page ? page.items.length : -1).toBe(3);

    const range = { id: meter.id, startTimestamp: at(0), endTimestamp: at(23), interval: 'day' as const };
    expect((await sdk().meters.quantities({ ...range, customerId: customer })).total).toBe(3);
    expect((await sdk().meters.quantities({ ...range, externalCustomerId: external })).total).toBe(3);
    // Per customer first: one customer with 3 events, not an external id with 2 and an id with 1.
    const perCustomer = await v1(owner.token, 'GET', `/meters/${meter.id}/quantities?start_timestamp=${at(0).toISOString()}&end_timestamp=${at(23).toISOString()}&interval=day&customer_aggregation_function=max`);
    expect((await perCustomer.json()).total).toBe(3);

    let items: { consumedUnits: number }[] = [];
    for (let attempt = 0; attempt < 300 && items[0]?.consumedUnits !== 3; attempt++) {
      items = (await sdk().customerMeters.list({ externalCustomerId: external, meterId: meter.id })).result.items;
      if (items[0]?.consumedUnits !== 3) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(items).toMatchObject([{ customerId: customer, consumedUnits: 3 }]);
  });

  it('lists the events a meter counts', async () => {
    const meter = await sdk().meters.create({ organizationId, name: 'Renders', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'render' }] }, aggregation: { func: 'count' } });
    const page = await sdk().events.list({ organizationId, meterId: meter.id, limit: 100 });
    const items = 'pagination' in page ? page.items : [];
    expect(items.length).toBe(4);
    expect(new Set(items.map((e) => e.name))).toEqual(new Set(['render']));

    const filtered = await sdk().events.list({ organizationId, filter: JSON.stringify({ conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'render' }, { property: 'minutes', operator: 'gte', value: 7 }] }), limit: 100 });
    expect(('pagination' in filtered ? filtered.items : []).map((e) => (e.metadata as Record<string, unknown>).minutes).sort((a, b) => Number(a) - Number(b))).toEqual([7, 100]);
    const bad = await v1(owner.token, 'GET', `/events/?filter=${encodeURIComponent('{"conjunction":"xor","clauses":[]}')}`);
    expect(bad.status).toBe(422);
  });

  it('archives a meter and hides it from archived=false lists; refuses archiving one a live price uses', async () => {
    const meter = await sdk().meters.create({ organizationId, name: 'Archivable', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    const archived = await sdk().meters.update({ id: meter.id, meterUpdate: { isArchived: true } });
    expect(archived.archivedAt).not.toBeNull();
    const live = await sdk().meters.list({ organizationId, isArchived: false, limit: 100 });
    expect(live.result.items.map((m) => m.id)).not.toContain(meter.id);

    const priced = await sdk().meters.create({ organizationId, name: 'Priced', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    await sdk().products.create({ organizationId, name: 'Metered plan', recurringInterval: 'month', prices: [{ amountType: 'metered_unit', meterId: priced.id, unitAmount: '0.5', priceCurrency: 'usd' }] });
    const refused = await v1(owner.token, 'PATCH', `/meters/${priced.id}`, { is_archived: true });
    expect(refused.status).toBe(422);
    expect((await refused.json()).detail[0].loc).toEqual(['body', 'is_archived']);
  });
});

describe('metered prices', () => {
  it('creates a metered_unit price on a recurring product, showing its meter, and refuses bad ones', async () => {
    const meter = await sdk().meters.create({ organizationId, name: 'Seats used', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'max', property: 'seats' } });
    const product = await sdk().products.create({
      organizationId,
      name: 'Usage plan',
      recurringInterval: 'month',
      prices: [
        { amountType: 'fixed', priceAmount: 0, priceCurrency: 'usd' },
        { amountType: 'metered_unit', meterId: meter.id, unitAmount: '12.5', capAmount: 10_000, priceCurrency: 'usd' },
      ],
    });
    const metered = product.prices.find((price) => 'amountType' in price && price.amountType === 'metered_unit');
    expect(metered).toMatchObject({ unitAmount: '12.5', capAmount: 10_000, meterId: meter.id, meter: { id: meter.id, name: 'Seats used', unit: 'scalar' } });

    const other = await signUp(daemon.url);
    const otherOrg = await createOrganization(other, 'Elsewhere');
    const foreignMeter = await polarSdk(daemon.url, other.token).meters.create({ organizationId: otherOrg, name: 'Theirs', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    const refusals = [
      [{ recurring_interval: 'month', prices: [{ amount_type: 'metered_unit', meter_id: foreignMeter.id, unit_amount: '1', price_currency: 'usd' }] }, ['body', 'prices', 0, 'meter_id']],
      [{ prices: [{ amount_type: 'metered_unit', meter_id: meter.id, unit_amount: '1', price_currency: 'usd' }] }, ['body', 'prices', 0]],
    ] as const;
    for (const [body, loc] of refusals) {
      const res = await v1(owner.token, 'POST', '/products/', { organization_id: organizationId, name: 'Refused', ...body });
      expect(res.status).toBe(422);
      expect((await res.json()).detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
    }
  });
});

describe('/v1/customer-meters', () => {
  it('answers 401 Unauthorized without credentials', async () => {
    expect((await v1(undefined, 'GET', '/customer-meters/')).status).toBe(401);
  });

  it("lists a customer's consumption, credits and balance, reading credits from the grants ledger", async () => {
    const customer = (await sdk().customers.create({ organizationId, email: `${unique('m')}@example.com` })).id;
    const meter = await sdk().meters.create({ organizationId, name: 'Credits meter', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'credit_use' }] }, aggregation: { func: 'sum', property: 'units' } });
    await sdk().events.ingest({ events: [1, 2, 3].map((units) => ({ name: 'credit_use', customerId: customer, metadata: { units } })) });
    const id = await refreshedCustomerMeter(daemon.db, organizationId, customer, meter.id);
    const fetched = await sdk().customerMeters.get({ id });
    expect(fetched).toMatchObject({ customerId: customer, meterId: meter.id, consumedUnits: 6, creditedUnits: 0, balance: -6, customer: { id: customer }, meter: { id: meter.id } });

    const list = await sdk().customerMeters.list({ customerId: customer, meterId: meter.id });
    expect(list.result.items.map((m) => m.id)).toEqual([id]);
    const missing = await sdk().customerMeters.get({ id: '00000000-0000-4000-8000-000000000000' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ResourceNotFound);
  });

  it('lets a token holding only customer_meters:read read customer meters, and nothing else of the meters', async () => {
    const customer = (await sdk().customers.create({ organizationId, email: `${unique('s')}@example.com` })).id;
    const meter = await sdk().meters.create({ organizationId, name: 'Scoped meter', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'scoped_use' }] }, aggregation: { func: 'count' } });
    await sdk().events.ingest({ events: [{ name: 'scoped_use', customerId: customer }] });
    const id = await refreshedCustomerMeter(daemon.db, organizationId, customer, meter.id);
    const res = await v1(owner.token, 'POST', '/organization-access-tokens/', { organization_id: organizationId, comment: 'customer meters', scopes: ['customer_meters:read'] });
    expect(res.status).toBe(201);
    const minted = await res.json();
    expect(minted.organization_access_token.scopes).toEqual(['customer_meters:read']);
    const scoped = polarSdk(daemon.url, minted.token);
    expect(await scoped.customerMeters.get({ id })).toMatchObject({ id, customerId: customer, meterId: meter.id, consumedUnits: 1 });
    const list = await scoped.customerMeters.list({ organizationId, customerId: customer, meterId: meter.id });
    expect(list.result.items.map((m) => m.id)).toEqual([id]);
    expect((await v1(minted.token, 'GET', `/meters/${meter.id}`)).status).toBe(403);
  });

  it("stores customer meters right after an ingest, also on a sandbox organization's standing clock", async () => {
    // A sandbox organization of its own: its clock stands still unless moved.
    const shop = await createOrganization(owner, 'Background Co');
    expect((await v1(owner.token, 'PATCH', `/organizations/${shop}/clock`, { sandbox: true })).status).toBe(200);
    const customer = (await sdk().customers.create({ organizationId: shop, email: `${unique('bg')}@example.com` })).id;
    const meter = await sdk().meters.create({ organizationId: shop, name: 'Background', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'bg' }] }, aggregation: { func: 'count' } });
    await sdk().events.ingest({ events: [{ name: 'bg', customerId: customer, organizationId: shop }, { name: 'bg', customerId: customer, organizationId: shop }] });
    const list = async () => (await sdk().customerMeters.list({ customerId: customer, meterId: meter.id })).result.items;
    let items: { consumedUnits: number }[] = [];
    for (let attempt = 0; attempt < 300 && items.length === 0; attempt++) {
      items = await list();
      if (items.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(items).toMatchObject([{ consumedUnits: 2 }]);
    // The change is announced as the customer's new state.
    const announced = await listEvents(daemon.db, shop, { type: 'customer.state_changed' });
    expect(announced.some((event) => (event.payload.data as { id?: string }).id === customer)).toBe(true);
  });
});
