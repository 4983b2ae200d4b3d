import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Request, polarSdk } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const sdk = (accessToken: string) => polarSdk(daemon.url, accessToken);

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

const rows = async (table: string) => Number((await daemon.db(table).count({ n: '*' }))[0].n);
const writtenRows = async () => Promise.all(['products', 'product_prices', 'product_medias', 'product_custom_fields'].map(rows));

const create = (input: Record<string, unknown>, token = owner.token) => sdk(token).products.create({ organizationId, ...input } as ProductCreate);

/** Uploads a small file through the SDK's files calls (a PNG as product media by default); answers its id. */
async function uploadMedia(token: string, orgId: string, service: 'product_media' | 'downloadable' = 'product_media'): Promise<string> {
  const bytes = randomBytes(64);
  const checksum = createHash('sha256').update(bytes).digest('base64');
  const polar = sdk(token);
  const upload = await polar.files.create({
    organizationId: orgId,
    service,
    name: 'cover.png',
    mimeType: 'image/png',
    size: bytes.length,
    checksumSha256Base64: checksum,
    upload: { parts: [{ number: 1, chunkStart: 0, chunkEnd: bytes.length, checksumSha256Base64: checksum }] },
  } as Parameters<Polar['files']['create']>[0]);
  const part = upload.upload.parts[0];
  const put = await fetch(part.url, { method: 'PUT', body: bytes });
  await polar.files.uploaded({
    id: upload.id,
    fileUploadCompleted: { id: upload.upload.id, path: upload.upload.path, parts: [{ number: 1, checksumEtag: put.headers.get('etag')!, checksumSha256Base64: checksum }] },
  });
  return upload.id;
}

const createField = async (slug: string) =>
  (await sdk(owner.token).customFields.create({ type: 'text', slug: `${slug}-${randomUUID().slice(0, 8)}`, name: slug, organizationId, properties: {} })).id;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Pat Products' });
  organizationId = await createOrganization(owner, 'Product House');
});
afterAll(async () => {
  await daemon?.close();
});

describe('POST and GET /v1/products', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    const res = await v1(undefined, 'GET', '/products/');
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'Unauthorized' });
    expect((await v1(undefined, 'POST', '/products/', { name: 'Nope', prices: [{ amount_type: 'free' }] })).status).toBe(401);
    expect((await v1(undefined, 'GET', `/products/${randomUUID()}`)).status).toBe(401);
  });

  it('creates one-time, monthly and every-third-year products, answering 201 with what the SDK validates', async () => {
    const oneTime = await create({ name: 'E-book', prices: [{ amountType: 'fixed', priceAmount: 900 }] });
    const monthly = await create({ name: 'Pro monthly', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1500 }] });
    const triennial = await create({ name: 'Pro triennial', recurringInterval: 'year', recurringIntervalCount: 3, prices: [{ amountType: 'fixed', priceAmount: 30000 }] });
    expect(oneTime).toMatchObject({ recurringInterval: null, recurringIntervalCount: null, isRecurring: false, isArchived: false, visibility: 'public', organizationId, modifiedAt: null });
    expect(monthly).toMatchObject({ recurringInterval: 'month', recurringIntervalCount: 1, isRecurring: true });
    expect(triennial).toMatchObject({ recurringInterval: 'year', recurringIntervalCount: 3, isRecurring: true });
    expect(await sdk(owner.token).products.get({ id: triennial.id })).toEqual(triennial);

    const res = await v1(owner.token, 'POST', '/products/', { name: 'Raw', organization_id: organizationId, prices: [{ amount_type: 'fixed', price_amount: 500 }] });
    expect(res.status).toBe(201);
    const raw = await res.json();
    expect(raw).toMatchObject({ meter_interval: null, meter_interval_count: null, trial_interval: null, trial_interval_count: null, description: null, metadata: {} });
    expect(raw.prices[0]).toMatchObject({ amount_type: 'fixed', price_amount: 500, price_currency: 'usd', tax_behavior: null, source: 'catalog', is_archived: false, product_id: raw.id });
    expect(raw.created_at).toMatch(/Z$/);
  });

  it('round-trips every price type through the SDK: fixed, custom, free (as fixed 0) and seat-based', async () => {
    const custom = await create({ name: 'Tip jar', prices: [{ amountType: 'custom', minimumAmount: 100, maximumAmount: 10000, presetAmount: 500 }] });
    expect(custom.prices[0]).toMatchObject({ amountType: 'custom', minimumAmount: 100, maximumAmount: 10000, presetAmount: 500 });
    const payWhatYouWant = await create({ name: 'Free or more', prices: [{ amountType: 'custom', minimumAmount: 0 }] });
    expect(payWhatYouWant.prices[0]).toMatchObject({ amountType: 'custom', minimumAmount: 0, maximumAmount: null, presetAmount: null });

    const free = await v1(owner.token, 'POST', '/products/', { name: 'Free tier', organization_id: organizationId, recurring_interval: 'month', prices: [{ amount_type: 'free' }] });
    expect(free.status).toBe(201);
    const freeProduct = await free.json();
    expect(freeProduct.prices).toEqual([expect.objectContaining({ amount_type: 'fixed', price_amount: 0 })]);
    expect((await sdk(owner.token).products.get({ id: freeProduct.id })).prices[0]).toMatchObject({ amountType: 'fixed', priceAmount: 0 });

    const seats = await create({
      name: 'Team',
      recurringInterval: 'month',
      prices: [
        { amountType: 'fixed', priceAmount: 2000 },
        { amountType: 'seat_based', seatTiers: { seatTierType: 'graduated', tiers: [{ minSeats: 6, pricePerSeat: 800 }, { minSeats: 1, maxSeats: 5, pricePerSeat: 1000 }] } },
      ],
    });
    expect(seats.prices[1]).toMatchObject({
      amountType: 'seat_based',
      seatTiers: { seatTierType: 'graduated', minimumSeats: 1, maximumSeats: null, tiers: [{ minSeats: 1, maxSeats: 5, pricePerSeat: 1000 }, { minSeats: 6, maxSeats: null, pricePerSeat: 800 }] },
    });
  });

  it('refuses metered prices naming no meter of the organization, on one-time products, and meter intervals, writing nothing', async () => {
    const before = await writtenRows();
    const metered = { amount_type: 'metered_unit', meter_id: randomUUID(), unit_amount: 0.5 };
    const res = await v1(owner.token, 'POST', '/products/', { name: 'Usage', organization_id: organizationId, recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 1000 }, metered] });
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual([{ loc: ['body', 'prices', 1, 'meter_id'], msg: 'Meter does not exist.', type: 'value_error' }]);
    const oneTime = await (await v1(owner.token, 'POST', '/products/', { name: 'Usage', organization_id: organizationId, prices: [metered] })).json();
    expect(oneTime.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'prices', 0], msg: 'Metered pricing is not supported on one-time products.' }));
    const cycle = await (await v1(owner.token, 'POST', '/products/', { name: 'Cycle', organization_id: organizationId, recurring_interval: 'year', meter_interval: 'month', prices: [{ amount_type: 'free' }] })).json();
    expect(cycle.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'meter_interval'] }));
    const sdkError = await create({ name: 'Usage', recurringInterval: 'month', prices: [{ amountType: 'metered_unit', meterId: randomUUID(), unitAmount: '0.25' }] }).catch((e: unknown) => e);
    expect(sdkError).toBeInstanceOf(HTTPValidationError);
    expect(await writtenRows()).toEqual(before);
  });

  it('keeps prices in several currencies, lowercase, as long as the default currency is among them', async () => {
    const product = await create({
      name: 'Worldwide',
      prices: [
        { amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd' },
        { amountType: 'fixed', priceAmount: 900, priceCurrency: 'eur', taxBehavior: 'inclusive' },
        { amountType: 'fixed', priceAmount: 1500, priceCurrency: 'jpy' },
      ],
    });
    expect(product.prices.map((p) => [p.priceCurrency, p.taxBehavior])).toEqual([['usd', null], ['eur', 'inclusive'], ['jpy', null]]);
    const eurOnly = await v1(owner.token, 'POST', '/products/', { name: 'Euro only', organization_id: organizationId, prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'eur' }] });
    expect(eurOnly.status).toBe(422);
    expect((await eurOnly.json()).detail[0]).toMatchObject({ loc: ['body', 'prices'], msg: expect.stringContaining('default presentment currency (usd)') });
  });

  it('refuses invalid products with a 422 naming the field, writing nothing', async () => {
    const base = { name: 'Valid name', organization_id: organizationId };
    const fixed = (amount: number, extra: Record<string, unknown> = {}) => ({ amount_type: 'fixed', price_amount: amount, ...extra });
    const cases: [unknown, (string | number)[]][] = [
      [{ ...base, name: 'ab', prices: [fixed(500)] }, ['body', 'name']],
      [{ ...base, name: 'x'.repeat(65), prices: [fixed(500)] }, ['body', 'name']],
      [{ organization_id: organizationId, prices: [fixed(500)] }, ['body', 'name']],
      [{ ...base }, ['body', 'prices']],
      [{ ...base, prices: [] }, ['body', 'prices']],
      [{ ...base, prices: [fixed(30)] }, ['body', 'prices', 0, 'price_amount']],
      [{ ...base, prices: [fixed(100_000_000)] }, ['body', 'prices', 0, 'price_amount']],
      [{ ...base, prices: [fixed(15.5)] }, ['body', 'prices', 0, 'price_amount']],
      [{ ...base, prices: [fixed(-1)] }, ['body', 'prices', 0, 'price_amount']],
      [{ ...base, prices: [fixed(500, { price_currency: 'USD' })] }, ['body', 'prices', 0, 'price_currency']],
      [{ ...base, prices: [fixed(500, { price_currency: 'xyz' })] }, ['body', 'prices', 0, 'price_currency']],
      [{ ...base, prices: [fixed(500, { tax_behavior: 'sometimes' })] }, ['body', 'prices', 0, 'tax_behavior']],
      [{ ...base, prices: [{ amount_type: 'bogus' }] }, ['body', 'prices', 0, 'amount_type']],
      [{ ...base, prices: [{ amount_type: 'custom', minimum_amount: 1000, maximum_amount: 500 }] }, ['body', 'prices', 0, 'maximum_amount']],
      [{ ...base, prices: [{ amount_type: 'custom', minimum_amount: 10 }] }, ['body', 'prices', 0, 'minimum_amount']],
      [{ ...base, prices: [{ amount_type: 'custom', minimum_amount: 100, maximum_amount: 1000, preset_amount: 2000 }] }, ['body', 'prices', 0, 'preset_amount']],
      [{ ...base, prices: [fixed(500), fixed(600)] }, ['body', 'prices']],
      [{ ...base, prices: [fixed(500), { amount_type: 'custom' }] }, ['body', 'prices']],
      [{ ...base, prices: [{ amount_type: 'free' }, { amount_type: 'seat_based', seat_tiers: { tiers: [{ min_seats: 1, price_per_seat: 500 }] } }] }, ['body', 'prices']],
      [{ ...base, prices: [fixed(500), fixed(500, { price_currency: 'eur' }), fixed(500, { price_currency: 'eur', tax_behavior: 'exclusive' })] }, ['body', 'prices']],
      [{ ...base, prices: [{ amount_type: 'seat_based', seat_tiers: { tiers: [{ min_seats: 1, max_seats: 5, price_per_seat: 500 }, { min_seats: 7, price_per_seat: 400 }] } }] }, ['body', 'prices', 0, 'seat_tiers', 'tiers']],
      [{ ...base, prices: [{ amount_type: 'seat_based', seat_tiers: { tiers: [{ min_seats: 1, price_per_seat: 500 }, { min_seats: 7, price_per_seat: 400 }] } }] }, ['body', 'prices', 0, 'seat_tiers', 'tiers']],
      [{ ...base, prices: [{ amount_type: 'metered_unit', meter_id: randomUUID(), unit_amount: '-1' }] }, ['body', 'prices', 0, 'unit_amount']],
      [{ ...base, recurring_interval: 'fortnight', prices: [fixed(500)] }, ['body', 'recurring_interval']],
      [{ ...base, recurring_interval: 'month', recurring_interval_count: 0, prices: [fixed(500)] }, ['body', 'recurring_interval_count']],
      [{ ...base, recurring_interval_count: 2, prices: [fixed(500)] }, ['body', 'recurring_interval_count']],
      [{ ...base, trial_interval: 'day', trial_interval_count: 7, prices: [fixed(500)] }, ['body', 'trial_interval']],
      [{ ...base, recurring_interval: 'month', trial_interval: 'day', prices: [fixed(500)] }, ['body', 'trial_interval_count']],
      [{ ...base, visibility: 'hidden', prices: [fixed(500)] }, ['body', 'visibility']],
      [{ ...base, metadata: { nested: { no: 1 } }, prices: [fixed(500)] }, ['body', 'metadata', 'nested']],
      [{ ...base, medias: [randomUUID()], prices: [fixed(500)] }, ['body', 'medias', 0]],
      [{ ...base, medias: ['not-a-uuid'], prices: [fixed(500)] }, ['body', 'medias', 0]],
      [{ ...base, attached_custom_fields: [{ custom_field_id: randomUUID(), required: true }], prices: [fixed(500)] }, ['body', 'attached_custom_fields', 0]],
    ];
    const before = await writtenRows();
    for (const [body, loc] of cases) {
      const res = await v1(owner.token, 'POST', '/products/', body);
      const answer = await res.json();
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect(answer.error).toBe('RequestValidationError');
      expect({ body, locs: answer.detail.map((d: { loc: unknown }) => d.loc) }).toEqual({ body, locs: expect.arrayContaining([loc]) });
    }
    expect(await writtenRows()).toEqual(before);
  });

  it('answers a refused create through the SDK as HTTPValidationError', async () => {
    const error = await create({ name: 'Too cheap', prices: [{ amountType: 'fixed', priceAmount: 10 }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail).toEqual([{ loc: ['body', 'prices', 0, 'price_amount'], msg: 'Amount must be at least 0.50 USD or 0 for free pricing', type: 'custom' }]);
  });

  it('attaches uploaded media and custom fields in the order given, embedded as the SDK reads them', async () => {
    const [first, second] = [await uploadMedia(owner.token, organizationId), await uploadMedia(owner.token, organizationId)];
    const [email, company] = [await createField('email'), await createField('company')];
    const product = await create({
      name: 'With extras',
      description: 'Everything attached',
      medias: [second, first],
      attachedCustomFields: [{ customFieldId: company, required: true }, { customFieldId: email, required: false }],
      prices: [{ amountType: 'fixed', priceAmount: 2500 }],
    });
    expect(product.medias.map((m) => m.id)).toEqual([second, first]);
    expect(product.medias[0]).toMatchObject({ service: 'product_media', isUploaded: true, publicUrl: expect.stringContaining(second) });
    expect(product.attachedCustomFields).toEqual([
      expect.objectContaining({ customFieldId: company, order: 0, required: true, customField: expect.objectContaining({ id: company, type: 'text' }) }),
      expect.objectContaining({ customFieldId: email, order: 1, required: false }),
    ]);
    expect(await sdk(owner.token).products.get({ id: product.id })).toEqual(product);
  });

  it('answers a product the same after a column is added to products while it runs (another daemon\'s migration)', async () => {
    // On PostgreSQL a product is read by a prepared statement, kept per connection: it must survive the change.
    const product = await create({ name: 'Migrated', prices: [{ amountType: 'fixed', priceAmount: 900 }] });
    const reads = async () => Promise.all(Array.from({ length: 12 }, () => sdk(owner.token).products.get({ id: product.id })));
    const before = await reads();
    await daemon.db.schema.alterTable('products', (t) => t.text('added_by_a_migration').nullable());
    try {
      expect(await reads()).toEqual(before);
    } finally {
      await daemon.db.schema.alterTable('products', (t) => t.dropColumn('added_by_a_migration'));
    }
    expect(await reads()).toEqual(before);
  });

  it('answers a product alone exactly as its list answers it: every price type, benefits, media, custom fields', async () => {
    // On PostgreSQL GET reads a product in one statement, a list through one query per relation: the same JSON.
    const polar = sdk(owner.token);
    const meter = await polar.meters.create({ organizationId, name: `Calls ${randomUUID().slice(0, 6)}`, filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    const [kept, gone] = [
      await polar.benefits.create({ type: 'custom', description: `Support ${randomUUID().slice(0, 6)}`, organizationId, properties: {}, metadata: { tier: 'gold' } }),
      await polar.benefits.create({ type: 'custom', description: `Chat ${randomUUID().slice(0, 6)}`, organizationId, properties: {} }),
    ];
    const media = await uploadMedia(owner.token, organizationId);
    const field = await createField('seats');
    const res = await v1(owner.token, 'POST', '/products/', {
      organization_id: organizationId,
      name: `Everything ${randomUUID().slice(0, 6)}`,
      recurring_interval: 'month',
      metadata: { plan: 'max', seats: 3 },
      medias: [media],
      attached_custom_fields: [{ custom_field_id: field, required: true }],
      prices: [
        { amount_type: 'fixed', price_amount: 2000 },
        { amount_type: 'seat_based', seat_tiers: { seat_tier_type: 'volume', tiers: [{ min_seats: 1, price_per_seat: 900 }] } },
        { amount_type: 'metered_unit', meter_id: meter.id, unit_amount: '0.25', cap_amount: 5000 },
      ],
    });
    expect(res.status).toBe(201);
    const { id } = await res.json();
    expect((await v1(owner.token, 'POST', `/products/${id}/benefits`, { benefits: [gone.id, kept.id] })).status).toBe(200);
    // A deleted benefit is left out; an archived price too (the update replaces the fixed one).
    expect((await v1(owner.token, 'DELETE', `/benefits/${gone.id}`)).status).toBe(204);
    const current = (await (await v1(owner.token, 'GET', `/products/${id}`)).json()).prices;
    expect((await v1(owner.token, 'PATCH', `/products/${id}`, { prices: [{ id: current[1].id }, { id: current[2].id }, { amount_type: 'fixed', price_amount: 2500 }] })).status).toBe(200);

    const alone = await (await v1(owner.token, 'GET', `/products/${id}`)).json();
    const listed = (await (await v1(owner.token, 'GET', `/products/?id=${id}`)).json()).items;
    expect(listed).toEqual([alone]);
    expect(alone.benefits.map((b: { id: string }) => b.id)).toEqual([kept.id]);
    expect(alone.prices.map((p: { amount_type: string }) => p.amount_type)).toEqual(['seat_based', 'metered_unit', 'fixed']);
    expect(alone.prices[1]).toMatchObject({ unit_amount: '0.25', cap_amount: 5000, meter: { id: meter.id, name: meter.name } });
    expect(alone.medias.map((m: { id: string }) => m.id)).toEqual([media]);
    expect(alone.attached_custom_fields).toEqual([expect.objectContaining({ custom_field_id: field, order: 0, required: true })]);
  });

  it('refuses a product media file that is not uploaded, or is not product media', async () => {
    const polar = sdk(owner.token);
    const pending = await polar.files.create({
      organizationId, service: 'product_media', name: 'pending.png', mimeType: 'image/png', size: 4, upload: { parts: [{ number: 1, chunkStart: 0, chunkEnd: 4 }] },
    } as Parameters<Polar['files']['create']>[0]);
    const download = await uploadMedia(owner.token, organizationId, 'downloadable');
    const error = await create({ name: 'Odd media', medias: [pending.id, download], prices: [{ amountType: 'fixed', priceAmount: 0 }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail).toEqual([
      { loc: ['body', 'medias', 0], msg: 'File does not exist or is not yet uploaded.', type: 'value_error' },
      { loc: ['body', 'medias', 1], msg: 'File does not exist or is not yet uploaded.', type: 'value_error' },
    ]);
  });

  it('answers 404 ResourceNotFound for an unknown product', async () => {
    const error = await sdk(owner.token).products.get({ id: randomUUID() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResourceNotFound);
  });

  it('writes product.created to the outbox with the product as the API serializes it', async () => {
    const res = await v1(owner.token, 'POST', '/products/', { name: 'Announced', organization_id: organizationId, metadata: { plan: 'gold' }, prices: [{ amount_type: 'fixed', price_amount: 700 }] });
    const product = await res.json();
    const events = await listEvents(daemon.db, organizationId, { type: 'product.created' });
    const event = events.find((e) => (e.payload.data as { id: string }).id === product.id);
    expect(event?.payload).toEqual({ type: 'product.created', timestamp: expect.stringMatching(/Z$/), data: product });
  });
});

describe('GET /v1/products (list)', () => {
  let listOrg: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    listOrg = await createOrganization(owner, 'List House');
    const make = async (key: string, input: Record<string, unknown>) => {
      ids[key] = (await create({ organizationId: listOrg, ...input })).id;
      // Distinct created_at values, so sorting by creation has one right answer.
      await new Promise((resolve) => setTimeout(resolve, 5));
    };
    await make('alpha', { name: 'Alpha one-time', prices: [{ amountType: 'fixed', priceAmount: 3000 }], metadata: { tier: 'gold', rank: 1, featured: true } });
    await make('beta', { name: 'Beta monthly', recurringInterval: 'month', prices: [{ amountType: 'custom', minimumAmount: 200 }], metadata: { tier: 'silver', rank: 2 }, visibility: 'private' });
    await make('gamma', { name: 'Gamma yearly', recurringInterval: 'year', prices: [{ amountType: 'fixed', priceAmount: 1000 }], metadata: { tier: 'gold', rank: 3 }, visibility: 'draft' });
    await make('delta', { name: 'Delta seats', recurringInterval: 'month', prices: [{ amountType: 'seat_based', seatTiers: { tiers: [{ minSeats: 1, pricePerSeat: 900 }] } }] });
    await sdk(owner.token).products.update({ id: ids.delta, productUpdate: { isArchived: true } });
    const benefit = await sdk(owner.token).benefits.create({ type: 'custom', description: 'Support', organizationId: listOrg, properties: {} });
    ids.benefit = benefit.id;
    await sdk(owner.token).products.updateBenefits({ id: ids.gamma, productBenefitsUpdate: { benefits: [benefit.id] } });
  });

  const names = async (request: Parameters<Polar['products']['list']>[0]) =>
    (await sdk(owner.token).products.list({ organizationId: listOrg, ...request })).result.items.map((p) => p.name.split(' ')[0]);

  it('filters by id, query, is_archived, is_recurring, benefit_id and visibility, as the SDK sends them', async () => {
    expect(await names({ sorting: ['name'] })).toEqual(['Alpha', 'Beta', 'Delta', 'Gamma']);
    expect(await names({ id: [ids.alpha, ids.gamma], sorting: ['name'] })).toEqual(['Alpha', 'Gamma']);
    expect(await names({ id: ids.beta })).toEqual(['Beta']);
    expect(await names({ query: 'MONTH' })).toEqual(['Beta']);
    expect(await names({ isArchived: true })).toEqual(['Delta']);
    expect(await names({ isArchived: false, sorting: ['name'] })).toEqual(['Alpha', 'Beta', 'Gamma']);
    expect(await names({ isRecurring: false })).toEqual(['Alpha']);
    expect(await names({ isRecurring: true, sorting: ['name'] })).toEqual(['Beta', 'Delta', 'Gamma']);
    expect(await names({ benefitId: ids.benefit })).toEqual(['Gamma']);
    expect(await names({ visibility: ['private', 'draft'], sorting: ['name'] })).toEqual(['Beta', 'Gamma']);
  });

  it('filters by metadata: values of one key OR-ed, keys AND-ed, compared as strings', async () => {
    expect(await names({ metadata: { tier: 'gold' }, sorting: ['name'] })).toEqual(['Alpha', 'Gamma']);
    expect(await names({ metadata: { tier: ['silver', 'gold'] }, sorting: ['name'] })).toEqual(['Alpha', 'Beta', 'Gamma']);
    expect(await names({ metadata: { tier: 'gold', rank: 3 } })).toEqual(['Gamma']);
    expect(await names({ metadata: { featured: true } })).toEqual(['Alpha']);
    expect(await names({ metadata: { tier: 'bronze' } })).toEqual([]);
  });

  it('sorts by created_at, name, price_amount_type and price_amount, both ways', async () => {
    expect(await names({})).toEqual(['Delta', 'Gamma', 'Beta', 'Alpha']);
    expect(await names({ sorting: ['created_at'] })).toEqual(['Alpha', 'Beta', 'Gamma', 'Delta']);
    expect(await names({ sorting: ['-name'] })).toEqual(['Gamma', 'Delta', 'Beta', 'Alpha']);
    // custom (1) before fixed (2); a seat-based price has no rank and comes last ascending, first descending.
    expect(await names({ sorting: ['price_amount_type', 'name'] })).toEqual(['Beta', 'Alpha', 'Gamma', 'Delta']);
    expect(await names({ sorting: ['-price_amount_type', 'name'] })).toEqual(['Delta', 'Alpha', 'Gamma', 'Beta']);
    expect(await names({ sorting: ['price_amount'] })).toEqual(['Beta', 'Gamma', 'Alpha', 'Delta']);
    expect(await names({ sorting: ['-price_amount'] })).toEqual(['Delta', 'Alpha', 'Gamma', 'Beta']);
    const res = await v1(owner.token, 'GET', `/products/?organization_id=${listOrg}&sorting=price`);
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0]).toMatchObject({ loc: ['query', 'sorting'] });
  });

  it('paginates with total_count and max_page, and the SDK iterator walks every page', async () => {
    const page = await sdk(owner.token).products.list({ organizationId: listOrg, limit: 3, sorting: ['name'] });
    expect(page.result.pagination).toEqual({ totalCount: 4, maxPage: 2 });
    expect(page.result.items).toHaveLength(3);
    const seen: string[] = [];
    for await (const p of page) seen.push(...p.result.items.map((item) => item.name));
    expect(seen).toHaveLength(4);
    const raw = await (await v1(owner.token, 'GET', `/products/?organization_id=${listOrg}&limit=500`)).json();
    expect(raw.pagination).toEqual({ total_count: 4, max_page: 1 });
  });

  it('lists only the organizations the caller reaches, even when another one is named', async () => {
    const stranger = await signUp(daemon.url);
    const strangerOrg = await createOrganization(stranger, 'Stranger Goods');
    await sdk(stranger.token).products.create({ name: 'Theirs', organizationId: strangerOrg, prices: [{ amountType: 'fixed', priceAmount: 500 }] } as ProductCreate);
    expect((await sdk(stranger.token).products.list({ organizationId: listOrg })).result.items).toEqual([]);
    expect((await sdk(stranger.token).products.list({ id: ids.alpha })).result.items).toEqual([]);
    expect((await sdk(stranger.token).products.list({})).result.items.map((p) => p.name)).toEqual(['Theirs']);
    expect((await sdk(owner.token).products.list({ query: 'Theirs' })).result.items).toEqual([]);
  });
});
