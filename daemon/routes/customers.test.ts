import { createHash } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { webhookCustomerCreatedPayloadFromJSON } from '@polar-sh/sdk/models/components/webhookcustomercreatedpayload.js';
import { webhookCustomerDeletedPayloadFromJSON } from '@polar-sh/sdk/models/components/webhookcustomerdeletedpayload.js';
import { webhookCustomerStateChangedPayloadFromJSON } from '@polar-sh/sdk/models/components/webhookcustomerstatechangedpayload.js';
import { webhookCustomerUpdatedPayloadFromJSON } from '@polar-sh/sdk/models/components/webhookcustomerupdatedpayload.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents, type OutboxEvent } from '../../core/webhooks/outbox.js';
import { signUp, uniqueEmail, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const sdk = (accessToken = owner.token) => new Polar({ accessToken, serverURL: daemon.url });

/** A /v1 call as the owner, or as `token` (null: no credentials). */
const v1 = (method: string, path: string, body?: unknown, token: string | null = owner.token) =>
  fetch(`${daemon.url}/v1${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const gravatar = (email: string) => `https://www.gravatar.com/avatar/${createHash('sha256').update(email.toLowerCase()).digest('hex')}?d=blank`;

async function createOrganization(who: SignedIn, name: string): Promise<string> {
  const res = await who.client.post('/organization/create', { name, slug: `${name.toLowerCase().replace(/\W+/g, '-')}-${Math.random().toString(36).slice(2, 8)}` });
  if (res.status !== 200) throw new Error(`organization create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** A customer created over plain HTTP; answers its wire JSON. */
async function create(body: Record<string, unknown> = {}) {
  const res = await v1('POST', '/customers/', { email: uniqueEmail('customer'), organization_id: organizationId, ...body });
  expect(res.status).toBe(201);
  return res.json();
}

/** Events the outbox holds for the organization after a point (what one call wrote). */
async function eventsSince(count: number): Promise<OutboxEvent[]> {
  return (await listEvents(daemon.db, organizationId)).slice(count);
}
const eventCount = async () => (await listEvents(daemon.db, organizationId)).length;
const customerRows = async () => Number((await daemon.db('customers').count({ n: '*' }))[0].n);

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Cora Customers' });
  organizationId = await createOrganization(owner, 'Customer Co');
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/customers', () => {
  it('answers 401 Unauthorized to every customer route without credentials', async () => {
    const calls: [string, string][] = [
      ['GET', '/customers/'], ['POST', '/customers/'], ['GET', '/customers/c1'], ['PATCH', '/customers/c1'], ['DELETE', '/customers/c1'],
      ['GET', '/customers/c1/state'], ['GET', '/customers/external/e1'], ['PATCH', '/customers/external/e1'],
      ['DELETE', '/customers/external/e1'], ['GET', '/customers/external/e1/state'],
    ];
    for (const [method, path] of calls) {
      const res = await v1(method, path, method === 'POST' || method === 'PATCH' ? {} : undefined, null);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 401 });
      expect(await res.json()).toMatchObject({ error: 'Unauthorized' });
    }
  });

  it('creates a customer through @polar-sh/sdk and answers Polar\'s exact Customer shape', async () => {
    const email = uniqueEmail('Ada.Lovelace');
    const created = await sdk().customers.create({
      email,
      externalId: 'usr_ada',
      name: 'Ada Lovelace',
      billingAddress: { line1: '12 Rue de la Paix', postalCode: '75002', city: 'Paris', country: 'FR' },
      taxId: 'FR61954506077',
      locale: 'fr-FR',
      metadata: { plan: 'pro', seats: 3, beta: true },
      organizationId,
    });
    expect(created).toMatchObject({ email, externalId: 'usr_ada', type: 'individual', taxId: ['FR61954506077', 'eu_vat'], deletedAt: null, modifiedAt: null });
    const wire = await (await v1('GET', `/customers/${created.id}`)).json();
    expect(wire).toEqual({
      id: created.id,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      modified_at: null,
      metadata: { plan: 'pro', seats: 3, beta: true },
      external_id: 'usr_ada',
      email,
      email_verified: false,
      type: 'individual',
      name: 'Ada Lovelace',
      billing_name: 'Ada Lovelace',
      billing_address: { line1: '12 Rue de la Paix', line2: null, postal_code: '75002', city: 'Paris', state: null, country: 'FR' },
      tax_id: ['FR61954506077', 'eu_vat'],
      locale: 'fr-FR',
      organization_id: organizationId,
      default_payment_method_id: null,
      deleted_at: null,
      avatar_url: gravatar(email),
      first_user_event_at: null,
    });
  });

  it('dates first_user_event_at from the earliest event ingested for the customer, before or after it was created', async () => {
    const ingest = async (events: Record<string, unknown>[]) => {
      const res = await v1('POST', '/events/ingest', { events: events.map((event) => ({ organization_id: organizationId, name: 'api.call', ...event })) });
      expect(res.status).toBe(200);
    };
    const external = `early-${Math.random().toString(36).slice(2, 8)}`;
    await ingest([{ external_customer_id: external, timestamp: '2026-01-05T10:00:00.000Z' }, { external_customer_id: external, timestamp: '2026-01-03T10:00:00.000Z' }]);
    const customer = await create({ external_id: external });
    expect(customer.first_user_event_at).toBe('2026-01-03T10:00:00.000Z');
    await ingest([{ customer_id: customer.id, timestamp: '2026-01-04T00:00:00.000Z' }]);
    expect((await (await v1('GET', `/customers/${customer.id}`)).json()).first_user_event_at).toBe('2026-01-03T10:00:00.000Z');
    await ingest([{ customer_id: customer.id, timestamp: '2026-01-01T00:00:00.000Z' }]);
    expect((await (await v1('GET', `/customers/external/${external}`)).json()).first_user_event_at).toBe('2026-01-01T00:00:00.000Z');
    const quiet = await create();
    expect(quiet.first_user_event_at).toBeNull();
  });

  it('gets a customer by id and by an external id holding a slash and spaces', async () => {
    const customer = await create({ external_id: 'usr/1 x' });
    expect((await sdk().customers.get({ id: customer.id })).id).toBe(customer.id);
    expect((await sdk().customers.getExternal({ externalId: 'usr/1 x' })).id).toBe(customer.id);
    await expect(sdk().customers.get({ id: '00000000-0000-4000-8000-000000000000' })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(sdk().customers.getExternal({ externalId: 'usr/1' })).rejects.toBeInstanceOf(ResourceNotFound);
  });

  it('writes customer.created and customer.state_changed with the exact API payloads', async () => {
    const before = await eventCount();
    const customer = await create({ external_id: 'usr_events', metadata: { source: 'test' } });
    const events = await eventsSince(before);
    expect(events.map((event) => event.payload)).toEqual([
      { type: 'customer.created', timestamp: expect.stringMatching(/Z$/), data: customer },
      { type: 'customer.state_changed', timestamp: expect.stringMatching(/Z$/), data: { ...customer, active_subscriptions: [], granted_benefits: [], active_meters: [] } },
    ]);
    expect(webhookCustomerCreatedPayloadFromJSON(JSON.stringify(events[0].payload)).ok).toBe(true);
    expect(webhookCustomerStateChangedPayloadFromJSON(JSON.stringify(events[1].payload)).ok).toBe(true);
  });

  it('lists customers filtered by organization, exact email, query and metadata, sorted and paginated', async () => {
    const other = await signUp(daemon.url);
    const listOrg = await createOrganization(other, 'List Co');
    const mine = (body: Record<string, unknown>) =>
      v1('POST', '/customers/', { organization_id: listOrg, ...body }, other.token).then(async (res) => {
        expect(res.status).toBe(201);
        return res.json();
      });
    const zoe = await mine({ email: 'Zoe@Example.test', name: 'Zoe Zed', metadata: { plan: 'pro', n: 1 } });
    const bob = await mine({ email: 'bob@example.test', name: 'Bob Builder', external_id: 'crm-42', metadata: { plan: 'free', beta: true } });
    const anon = await mine({ email: 'anon@example.test', metadata: { plan: 'pro', n: 2 } });
    const polar = sdk(other.token);
    const ids = async (request: Parameters<Polar['customers']['list']>[0]) =>
      (await polar.customers.list({ organizationId: listOrg, ...request })).result.items.map((c) => c.id);

    expect(await ids({})).toEqual([anon.id, bob.id, zoe.id]);
    expect(await ids({ email: 'zoe@example.TEST' })).toEqual([zoe.id]);
    expect(await ids({ query: 'BUILD' })).toEqual([bob.id]);
    expect(await ids({ query: 'crm-' })).toEqual([bob.id]);
    expect(await ids({ query: '42' })).toEqual([]);
    expect(await ids({ query: '%' })).toEqual([]);
    expect(await ids({ metadata: { plan: 'pro' } })).toEqual([anon.id, zoe.id]);
    expect(await ids({ metadata: { plan: ['free', 'pro'], n: 1 } })).toEqual([zoe.id]);
    expect(await ids({ metadata: { beta: true } })).toEqual([bob.id]);
    expect(await ids({ sorting: ['email'] })).toEqual([anon.id, bob.id, zoe.id]);
    expect(await ids({ sorting: ['name'] })).toEqual([bob.id, zoe.id, anon.id]);
    expect(await ids({ sorting: ['-name'] })).toEqual([anon.id, zoe.id, bob.id]);
    expect(await ids({ organizationId: [listOrg, organizationId] })).toEqual([anon.id, bob.id, zoe.id]);

    const page = await polar.customers.list({ organizationId: listOrg, sorting: ['created_at'], limit: 2, page: 2 });
    expect(page.result).toMatchObject({ items: [{ id: anon.id }], pagination: { totalCount: 3, maxPage: 2 } });
    const unknownSort = await v1('GET', `/customers/?sorting=age`, undefined, other.token);
    expect(unknownSort.status).toBe(422);
    expect((await unknownSort.json()).detail[0].loc).toEqual(['query', 'sorting']);
  });

  it('finds no active customer until subscriptions exist, and every customer as not active', async () => {
    const customer = await create();
    const active = await sdk().customers.list({ organizationId, active: true });
    expect(active.result).toEqual({ items: [], pagination: { totalCount: 0, maxPage: 0 } });
    const inactive = await sdk().customers.list({ organizationId, active: false, email: customer.email });
    expect(inactive.result.items.map((c) => c.id)).toEqual([customer.id]);
  });

  it('refuses a taken email in any case and a taken external id, in one 422 that writes nothing', async () => {
    const first = await create({ external_id: 'usr_taken' });
    const [rows, events] = [await customerRows(), await eventCount()];
    const res = await v1('POST', '/customers/', { email: first.email.toUpperCase(), external_id: 'usr_taken', organization_id: organizationId });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      error: 'RequestValidationError',
      detail: [
        { loc: ['body', 'email'], msg: 'A customer with this email address already exists.', type: 'value_error' },
        { loc: ['body', 'external_id'], msg: 'A customer with this external ID already exists.', type: 'value_error' },
      ],
    });
    expect([await customerRows(), await eventCount()]).toEqual([rows, events]);
    const other = await signUp(daemon.url);
    const otherOrg = await createOrganization(other, 'Same Email Co');
    const elsewhere = await v1('POST', '/customers/', { email: first.email, external_id: 'usr_taken', organization_id: otherOrg }, other.token);
    expect(elsewhere.status).toBe(201);
  });

  it('lets exactly one of several simultaneous creates with the same email succeed; the others get a 422 on the email', async () => {
    const email = uniqueEmail('race');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => v1('POST', '/customers/', { email: i % 2 ? email.toUpperCase() : email, organization_id: organizationId })),
    );
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses).toEqual([201, 422, 422, 422, 422, 422, 422, 422]);
    for (const res of answers.filter((r) => r.status === 422)) expect((await res.json()).detail).toEqual([expect.objectContaining({ loc: ['body', 'email'] })]);
    const created = await daemon.db('customers').where({ email_lower: email.toLowerCase() });
    expect(created).toHaveLength(1);
    expect(await listEvents(daemon.db, organizationId, { type: 'customer.created' }).then((e) => e.filter((x) => (x.payload.data as { email: string }).email.toLowerCase() === email.toLowerCase()))).toHaveLength(1);
  });

  it('has the database refuse a second live customer with the same email or external id, but not a deleted one', async () => {
    const customer = await create({ external_id: 'usr_index' });
    const row = await daemon.db('customers').where({ id: customer.id }).first();
    const copy = (changes: Record<string, unknown>) => daemon.db('customers').insert({ ...row, id: `copy-${Math.random()}`, ...changes });
    await expect(copy({ external_id: null })).rejects.toThrow();
    await expect(copy({ email: 'other@example.test', email_lower: 'other@example.test' })).rejects.toThrow();
    await expect(copy({ deleted_at: row.created_at })).resolves.toBeDefined();
  });

  it('updates the fields given, keeps the others, and writes customer.updated and customer.state_changed', async () => {
    const customer = await create({ name: 'Old Name', locale: 'en', metadata: { a: 1 }, billing_address: { country: 'DE' } });
    const before = await eventCount();
    const updated = await sdk().customers.update({
      id: customer.id,
      customerUpdate: { name: 'New Name', metadata: { b: 'two' }, billingAddress: { country: 'US', state: 'NY', city: 'New York' }, taxId: '91-1144442' },
    });
    expect(updated).toMatchObject({ name: 'New Name', locale: 'en', metadata: { b: 'two' }, email: customer.email, taxId: ['911144442', 'us_ein'] });
    expect(updated.billingAddress).toEqual({ line1: null, line2: null, postalCode: null, city: 'New York', state: 'US-NY', country: 'US' });
    expect(updated.modifiedAt).toBeInstanceOf(Date);
    const wire = await (await v1('GET', `/customers/${customer.id}`)).json();
    const events = await eventsSince(before);
    expect(events.map((event) => event.payload)).toEqual([
      { type: 'customer.updated', timestamp: expect.stringMatching(/Z$/), data: wire },
      { type: 'customer.state_changed', timestamp: expect.stringMatching(/Z$/), data: { ...wire, active_subscriptions: [], granted_benefits: [], active_meters: [] } },
    ]);
    expect(webhookCustomerUpdatedPayloadFromJSON(JSON.stringify(events[0].payload)).ok).toBe(true);
    const cleared = await v1('PATCH', `/customers/${customer.id}`, { name: null, locale: null, tax_id: null });
    expect(await cleared.json()).toMatchObject({ name: null, billing_name: null, locale: null, tax_id: null, metadata: { b: 'two' } });
  });

  it('applies simultaneous updates of different fields one after the other, losing none of them', async () => {
    const customer = await create();
    const patches = [{ name: 'Concurrent' }, { locale: 'de' }, { external_id: `usr_${customer.id}` }, { billing_address: { country: 'FR' } }, { metadata: { seen: true } }];
    const answers = await Promise.all(patches.map((patch) => v1('PATCH', `/customers/${customer.id}`, patch)));
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await (await v1('GET', `/customers/${customer.id}`)).json()).toMatchObject({
      name: 'Concurrent',
      locale: 'de',
      external_id: `usr_${customer.id}`,
      billing_address: { country: 'FR' },
      metadata: { seen: true },
    });
  });

  it('sets an external id once and refuses to change it afterwards', async () => {
    const customer = await create();
    const set = await sdk().customers.update({ id: customer.id, customerUpdate: { externalId: 'usr_once' } });
    expect(set.externalId).toBe('usr_once');
    const before = await eventCount();
    const error = await sdk().customers.update({ id: customer.id, customerUpdate: { externalId: 'usr_twice' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'external_id'], msg: 'Customer external ID cannot be updated.' })]);
    expect((await sdk().customers.get({ id: customer.id })).externalId).toBe('usr_once');
    expect(await eventCount()).toBe(before);
    const taken = await create();
    const clash = await v1('PATCH', `/customers/${taken.id}`, { external_id: 'usr_once' });
    expect((await clash.json()).detail).toEqual([expect.objectContaining({ loc: ['body', 'external_id'], msg: 'A customer with this external ID already exists.' })]);
  });

  it('refuses an email another customer has, and takes a change of case of its own', async () => {
    const a = await create();
    const b = await create();
    const clash = await v1('PATCH', `/customers/${b.id}`, { email: a.email.toUpperCase() });
    expect(clash.status).toBe(422);
    expect((await clash.json()).detail).toEqual([expect.objectContaining({ loc: ['body', 'email'] })]);
    const recased = await v1('PATCH', `/customers/${a.id}`, { email: a.email.toUpperCase() });
    expect(await recased.json()).toMatchObject({ email: a.email.toUpperCase(), avatar_url: gravatar(a.email) });
  });

  it('reads a tax ID as a format of the billing country and refuses one it cannot place', async () => {
    expect((await create({ billing_address: { country: 'GB' }, tax_id: 'GB980780684' })).tax_id).toEqual(['980780684', 'gb_vat']);
    expect((await create({ billing_address: { country: 'DE' }, tax_id: 'DE 123 456 789' })).tax_id).toEqual(['DE123456789', 'eu_vat']);
    const rows = await customerRows();
    const noCountry = await v1('POST', '/customers/', { email: uniqueEmail(), tax_id: 'FR61954506077', organization_id: organizationId });
    expect((await noCountry.json()).detail).toEqual([{ loc: ['body', 'billing_address'], msg: 'Country is required to validate tax ID.', type: 'missing' }]);
    const wrong = await v1('POST', '/customers/', { email: uniqueEmail(), tax_id: 'FR61954506077', billing_address: { country: 'US' }, organization_id: organizationId });
    expect((await wrong.json()).detail).toEqual([{ loc: ['body', 'tax_id'], msg: 'Invalid tax ID.', type: 'invalid' }]);
    expect(await customerRows()).toBe(rows);
    // Moving a customer to a country its tax ID does not belong to is refused too.
    const french = await create({ billing_address: { country: 'FR' }, tax_id: 'FR61954506077' });
    const moved = await v1('PATCH', `/customers/${french.id}`, { billing_address: { country: 'US' } });
    expect((await moved.json()).detail).toEqual([expect.objectContaining({ loc: ['body', 'tax_id'] })]);
  });

  it('keeps a billing address once set: null is refused, a new one replaces it', async () => {
    const customer = await create({ billing_address: { country: 'FR', city: 'Lyon' } });
    const cleared = await v1('PATCH', `/customers/${customer.id}`, { billing_address: null });
    expect(cleared.status).toBe(422);
    expect((await cleared.json()).detail).toEqual([expect.objectContaining({ loc: ['body', 'billing_address'] })]);
    const moved = await v1('PATCH', `/customers/${customer.id}`, { billing_address: { country: 'ca', state: 'qc', line1: '  ' } });
    expect((await moved.json()).billing_address).toEqual({ line1: null, line2: null, postal_code: null, city: null, state: 'CA-QC', country: 'CA' });
  });

  it('refuses invalid input with a 422 naming the field, writing nothing', async () => {
    const customer = await create();
    const rows = await customerRows();
    const events = await eventCount();
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    const cases: [string, string, unknown, (string | number)[]][] = [
      ['POST', '/customers/', { organization_id: organizationId }, ['body', 'email']],
      ['POST', '/customers/', { email: 'not an email', organization_id: organizationId }, ['body', 'email']],
      ['POST', '/customers/', { email: uniqueEmail(), type: 'team', organization_id: organizationId }, ['body', 'type']],
      ['POST', '/customers/', { email: uniqueEmail(), billing_address: { city: 'Paris' }, organization_id: organizationId }, ['body', 'billing_address', 'country']],
      ['POST', '/customers/', { email: uniqueEmail(), billing_address: { country: 'XX' }, organization_id: organizationId }, ['body', 'billing_address', 'country']],
      ['POST', '/customers/', { email: uniqueEmail(), billing_address: { country: 'CU' }, organization_id: organizationId }, ['body', 'billing_address', 'country']],
      ['POST', '/customers/', { email: uniqueEmail(), billing_address: { country: 'US', state: 'ZZ' }, organization_id: organizationId }, ['body', 'billing_address', 'state']],
      ['POST', '/customers/', { email: uniqueEmail(), metadata: tooMany, organization_id: organizationId }, ['body', 'metadata']],
      ['POST', '/customers/', { email: uniqueEmail(), metadata: { ['k'.repeat(41)]: 1 }, organization_id: organizationId }, ['body', 'metadata', 'k'.repeat(41)]],
      ['POST', '/customers/', { email: uniqueEmail(), metadata: { k: 'v'.repeat(501) }, organization_id: organizationId }, ['body', 'metadata', 'k']],
      ['POST', '/customers/', { email: uniqueEmail(), metadata: { k: { nested: true } }, organization_id: organizationId }, ['body', 'metadata', 'k']],
      ['POST', '/customers/', { email: uniqueEmail(), name: 'nul\u0000', organization_id: organizationId }, ['body', 'name']],
      ['POST', '/customers/', { email: uniqueEmail(), external_id: '', organization_id: organizationId }, ['body', 'external_id']],
      ['PATCH', `/customers/${customer.id}`, { email: 'nope' }, ['body', 'email']],
      ['PATCH', `/customers/${customer.id}`, { type: 'team' }, ['body', 'type']],
      ['PATCH', `/customers/${customer.id}`, { metadata: { k: 'nul\u0000' } }, ['body', 'metadata', 'k']],
      ['GET', '/customers/external/nul%00', undefined, ['path', 'external_id']],
      ['GET', '/customers/?query=nul%00', undefined, ['query', 'query']],
      ['GET', '/customers/?metadata%5Bk%5D=nul%00', undefined, ['query', 'metadata[k]']],
      ['GET', '/customers/?page=0', undefined, ['query', 'page']],
      ['DELETE', `/customers/${customer.id}?anonymize=maybe`, undefined, ['query', 'anonymize']],
    ];
    for (const [method, path, body, loc] of cases) {
      const res = await v1(method, path, body);
      const answer = await res.json();
      expect({ method, path, status: res.status, loc: answer.detail?.[0]?.loc }).toEqual({ method, path, status: 422, loc });
    }
    expect([await customerRows(), await eventCount()]).toEqual([rows, events]);
    expect((await sdk().customers.get({ id: customer.id })).deletedAt).toBeNull();
  });

  it('updates, reads the state of and deletes a customer by external id, as the SDK calls them', async () => {
    const customer = await create({ external_id: 'usr_ext' });
    const updated = await sdk().customers.updateExternal({ externalId: 'usr_ext', customerUpdateExternalID: { name: 'By External', metadata: { via: 'external' } } });
    expect(updated).toMatchObject({ id: customer.id, name: 'By External', metadata: { via: 'external' }, externalId: 'usr_ext' });
    const state = await sdk().customers.getStateExternal({ externalId: 'usr_ext' });
    expect(state).toMatchObject({ id: customer.id, activeSubscriptions: [], grantedBenefits: [], activeMeters: [] });
    await sdk().customers.deleteExternal({ externalId: 'usr_ext' });
    await expect(sdk().customers.getExternal({ externalId: 'usr_ext' })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(sdk().customers.get({ id: customer.id })).rejects.toBeInstanceOf(ResourceNotFound);
  });

  it('answers a customer\'s state with no subscriptions, benefits or meters yet', async () => {
    const customer = await create({ external_id: 'usr_state' });
    const state = await sdk().customers.getState({ id: customer.id });
    expect(state).toMatchObject({ id: customer.id, type: 'individual', activeSubscriptions: [], grantedBenefits: [], activeMeters: [] });
    expect(await (await v1('GET', `/customers/${customer.id}/state`)).json()).toEqual({ ...customer, active_subscriptions: [], granted_benefits: [], active_meters: [] });
    expect(await (await v1('GET', '/customers/external/usr_state/state')).json()).toEqual({ ...customer, active_subscriptions: [], granted_benefits: [], active_meters: [] });
  });

  it('answers a subscribed customer\'s state the same by id as by external id, subscription and granted benefit included', async () => {
    // On PostgreSQL the state by id is read in one statement, by external id query by query: the same JSON.
    const benefit = await (await v1('POST', '/benefits/', { organization_id: organizationId, type: 'custom', description: 'Support line', properties: { note: 'Call us' }, metadata: { level: 2 } })).json();
    const plan = await (await v1('POST', '/products/', { organization_id: organizationId, name: 'Free plan', recurring_interval: 'month', prices: [{ amount_type: 'free' }] })).json();
    expect((await v1('POST', `/products/${plan.id}/benefits`, { benefits: [benefit.id] })).status).toBe(200);
    const customer = await create({ external_id: 'usr_subscribed' });
    expect((await v1('POST', '/subscriptions/', { product_id: plan.id, customer_id: customer.id, metadata: { source: 'test' } })).status).toBe(201);
    const stateById = async () => (await v1('GET', `/customers/${customer.id}/state`)).json();
    await expect.poll(async () => (await stateById()).granted_benefits.length, { timeout: 15_000, interval: 100 }).toBe(1);
    const byId = await stateById();
    expect(byId).toMatchObject({ id: customer.id, active_subscriptions: [{ product_id: plan.id, status: 'active', metadata: { source: 'test' } }], granted_benefits: [{ benefit_id: benefit.id, benefit_metadata: { level: 2 } }] });
    expect(await (await v1('GET', '/customers/external/usr_subscribed/state')).json()).toEqual(byId);
    // Another organization's token never reads it.
    const other = await signUp(daemon.url, { name: 'Other Seller' });
    expect((await v1('GET', `/customers/${customer.id}/state`, undefined, other.token)).status).toBe(404);
  });

  it('answers a customer\'s state the same after a column is added to customers while it runs (another daemon\'s migration)', async () => {
    // On PostgreSQL the state is read by a prepared statement, kept per connection: it must survive the change.
    const customer = await create({ external_id: 'usr_migrated' });
    const states = async () => Promise.all(Array.from({ length: 12 }, async () => (await v1('GET', `/customers/${customer.id}/state`)).json()));
    const before = await states();
    await daemon.db.schema.alterTable('customers', (t) => t.text('added_by_a_migration').nullable());
    try {
      expect(await states()).toEqual(before);
    } finally {
      await daemon.db.schema.alterTable('customers', (t) => t.dropColumn('added_by_a_migration'));
    }
    expect(await states()).toEqual(before);
  });

  it('soft-deletes: the customer reads as not found, its email and external id are free, customer.deleted carries deleted_at', async () => {
    const customer = await create({ external_id: 'usr_gone', metadata: { plan: 'pro' } });
    const before = await eventCount();
    await sdk().customers.delete({ id: customer.id });
    await expect(sdk().customers.get({ id: customer.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(sdk().customers.update({ id: customer.id, customerUpdate: { name: 'Ghost' } })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(sdk().customers.delete({ id: customer.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await sdk().customers.list({ organizationId, email: customer.email })).result.items).toEqual([]);

    const events = await eventsSince(before);
    const deleted = {
      ...customer,
      external_id: null,
      metadata: { plan: 'pro', __external_id: 'usr_gone' },
      modified_at: expect.stringMatching(/Z$/),
      deleted_at: expect.stringMatching(/Z$/),
    };
    expect(events.map((event) => event.payload)).toEqual([
      { type: 'customer.deleted', timestamp: expect.stringMatching(/Z$/), data: deleted },
      { type: 'customer.state_changed', timestamp: expect.stringMatching(/Z$/), data: { ...deleted, active_subscriptions: [], granted_benefits: [], active_meters: [] } },
    ]);
    expect(webhookCustomerDeletedPayloadFromJSON(JSON.stringify(events[0].payload)).ok).toBe(true);
    expect(await daemon.db('customers').where({ id: customer.id }).first()).toMatchObject({ email: customer.email, external_id: null });

    const again = await create({ email: customer.email, external_id: 'usr_gone' });
    expect(again.id).not.toBe(customer.id);
    expect((await sdk().customers.getExternal({ externalId: 'usr_gone' })).id).toBe(again.id);
  });

  it('anonymizes the email, name and billing address of a customer deleted with anonymize=true', async () => {
    const customer = await create({ name: 'Private Person', billing_address: { country: 'FR', line1: '1 Rue' } });
    const res = await v1('DELETE', `/customers/${customer.id}?anonymize=true`);
    expect(res.status).toBe(204);
    const [event] = await listEvents(daemon.db, organizationId, { type: 'customer.deleted' }).then((all) => all.filter((e) => (e.payload.data as { id: string }).id === customer.id));
    const data = event.payload.data as Record<string, unknown>;
    expect(data).toMatchObject({ email: expect.stringMatching(/^[0-9a-f]{64}@anonymized\.invalid$/), name: expect.stringMatching(/^[0-9a-f]{64}$/), billing_address: null });
    expect(JSON.stringify(await daemon.db('customers').where({ id: customer.id }).first())).not.toContain(customer.email);
  });

  it('describes every customer operation in /openapi.json', async () => {
    const document = await (await fetch(`${daemon.url}/openapi.json`)).json();
    for (const path of ['/v1/customers', '/v1/customers/{id}', '/v1/customers/{id}/state', '/v1/customers/external/{external_id}', '/v1/customers/external/{external_id}/state']) {
      expect(document.paths[path]).toBeDefined();
    }
    expect(document.paths['/v1/customers'].post['x-scopes']).toEqual(['customers:write']);
    expect(document.paths['/v1/customers'].post.requestBody.content['application/json'].schema.properties.email).toBeDefined();
  });
});
