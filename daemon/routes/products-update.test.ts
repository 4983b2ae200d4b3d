import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import type { Product } from '@polar-sh/sdk/models/components/product.js';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { NotPermitted } from '@polar-sh/sdk/models/errors/notpermitted.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPrice, insertPrices } from '../../core/billing/products/repository.js';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Request, polarSdk } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const sdk = (accessToken: string) => polarSdk(daemon.url, accessToken);

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

const create = (input: Record<string, unknown> = {}, token = owner.token, orgId = organizationId) =>
  sdk(token).products.create({ organizationId: orgId, name: 'Starter', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000 }], ...input } as ProductCreate);

const benefit = (token = owner.token, orgId = organizationId, description = 'Priority support') =>
  sdk(token).benefits.create({ type: 'custom', description, organizationId: orgId, properties: {} });

const customField = (token = owner.token, orgId = organizationId) =>
  sdk(token).customFields.create({ type: 'checkbox', slug: `terms-${randomUUID().slice(0, 8)}`, name: 'Terms', organizationId: orgId, properties: {} });

/** The product's rows as stored: a refused change must leave them exactly as they were. */
async function snapshot(productId: string) {
  const [product, prices, benefits, medias, fields] = await Promise.all([
    daemon.db('products').where({ id: productId }).first(),
    daemon.db('product_prices').where({ product_id: productId }).orderBy('position'),
    daemon.db('product_benefits').where({ product_id: productId }).orderBy('position'),
    daemon.db('product_medias').where({ product_id: productId }).orderBy('position'),
    daemon.db('product_custom_fields').where({ product_id: productId }).orderBy('position'),
  ]);
  return { product, prices, benefits, medias, fields };
}

const updatedEventsOf = async (productId: string) =>
  (await listEvents(daemon.db, organizationId, { type: 'product.updated' })).filter((e) => (e.payload.data as { id: string }).id === productId);

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Uma Update' });
  organizationId = await createOrganization(owner, 'Update Works');
});
afterAll(async () => {
  await daemon?.close();
});

describe('PATCH /v1/products/{id} and POST /v1/products/{id}/benefits', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    const product = await create();
    expect((await v1(undefined, 'PATCH', `/products/${product.id}`, { name: 'Nope' })).status).toBe(401);
    expect((await v1(undefined, 'POST', `/products/${product.id}/benefits`, { benefits: [] })).status).toBe(401);
    expect((await sdk(owner.token).products.get({ id: product.id })).name).toBe('Starter');
  });

  it('updates name, description, visibility and metadata, clears the description with null, and writes product.updated', async () => {
    const product = await create({ description: 'Before', metadata: { a: 1 } });
    const updated = await sdk(owner.token).products.update({ id: product.id, productUpdate: { name: 'Starter plus', visibility: 'private', metadata: { plan: 'plus', seats: 3 } } });
    expect(updated).toMatchObject({ name: 'Starter plus', description: 'Before', visibility: 'private', metadata: { plan: 'plus', seats: 3 }, prices: product.prices });
    expect(updated.modifiedAt).toBeInstanceOf(Date);
    const cleared = await sdk(owner.token).products.update({ id: product.id, productUpdate: { description: null, name: null } });
    expect(cleared).toMatchObject({ name: 'Starter plus', description: null, visibility: 'private' });

    const events = await updatedEventsOf(product.id);
    expect(events).toHaveLength(2);
    const raw = await (await v1(owner.token, 'GET', `/products/${product.id}`)).json();
    expect(events[1].payload).toEqual({ type: 'product.updated', timestamp: expect.stringMatching(/Z$/), data: raw });
  });

  it('archives the prices an update replaces, keeps the ones named by id, and never edits a price', async () => {
    const product = await create({ name: 'Repriced', prices: [{ amountType: 'fixed', priceAmount: 1000 }, { amountType: 'fixed', priceAmount: 900, priceCurrency: 'eur' }] });
    const [usd, eur] = product.prices;
    const before = await snapshot(product.id);

    const updated = await sdk(owner.token).products.update({
      id: product.id,
      productUpdate: { prices: [{ id: eur.id }, { amountType: 'fixed', priceAmount: 2000 }] },
    });
    expect(updated.prices.map((p) => [p.priceCurrency, (p as { priceAmount: number }).priceAmount])).toEqual([['eur', 900], ['usd', 2000]]);
    expect(updated.prices[0]).toEqual(eur);
    expect(updated.prices.map((p) => p.id)).not.toContain(usd.id);

    // The replaced price is archived, its terms untouched, and still found by id (as an order will find it).
    const old = await findPrice(daemon.db, usd.id);
    expect(old).toMatchObject({ id: usd.id, productId: product.id, isArchived: true, amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd', organizationId });
    const after = await snapshot(product.id);
    expect(after.prices).toHaveLength(3);
    const { is_archived: _a, modified_at: _m, ...oldTerms } = before.prices[0];
    expect(after.prices[0]).toMatchObject(oldTerms);
    expect(after.prices[1]).toEqual(before.prices[1]);
    expect((await updatedEventsOf(product.id)).at(-1)?.payload.data).toMatchObject({ prices: [{ id: eur.id }, { price_amount: 2000, is_archived: false }] });

    // Switching to pay-what-you-want replaces both.
    const custom = await sdk(owner.token).products.update({ id: product.id, productUpdate: { prices: [{ amountType: 'custom', minimumAmount: 500 }] } });
    expect(custom.prices).toEqual([expect.objectContaining({ amountType: 'custom', minimumAmount: 500 })]);
    expect((await findPrice(daemon.db, eur.id))?.isArchived).toBe(true);
  });

  it('refuses a price that is not among the product\'s current ones, or a price set that breaks the rules, changing nothing', async () => {
    const product = await create({ name: 'Guarded' });
    const other = await create({ name: 'Other' });
    await sdk(owner.token).products.update({ id: product.id, productUpdate: { prices: [{ amountType: 'fixed', priceAmount: 1200 }] } });
    const archivedId = product.prices[0].id;
    const before = await snapshot(product.id);
    const cases: [unknown, (string | number)[]][] = [
      [{ prices: [{ id: other.prices[0].id }] }, ['body', 'prices', 0]],
      [{ prices: [{ id: archivedId }] }, ['body', 'prices', 0]],
      [{ prices: [{ id: randomUUID() }] }, ['body', 'prices', 0]],
      [{ prices: [] }, ['body', 'prices']],
      [{ prices: [{ amount_type: 'fixed', price_amount: 500 }, { amount_type: 'fixed', price_amount: 600 }] }, ['body', 'prices']],
      [{ prices: [{ amount_type: 'fixed', price_amount: 10 }] }, ['body', 'prices', 0, 'price_amount']],
      [{ prices: [{ amount_type: 'metered_unit', meter_id: randomUUID(), unit_amount: '1' }] }, ['body', 'prices', 0, 'meter_id']],
      [{ prices: [{ bogus: true }] }, ['body', 'prices', 0, 'id']],
      [{ name: 'Okay name', recurring_interval: 'year' }, ['body', 'recurring_interval']],
      [{ recurring_interval_count: 2 }, ['body', 'recurring_interval']],
      [{ medias: [randomUUID()] }, ['body', 'medias', 0]],
      [{ attached_custom_fields: [{ custom_field_id: randomUUID(), required: false }] }, ['body', 'attached_custom_fields', 0]],
      [{ is_archived: 'yes' }, ['body', 'is_archived']],
      [{ trial_interval: 'week' }, ['body', 'trial_interval_count']],
    ];
    for (const [body, loc] of cases) {
      const res = await v1(owner.token, 'PATCH', `/products/${product.id}`, body);
      const answer = await res.json();
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect({ body, locs: answer.detail.map((d: { loc: unknown }) => d.loc) }).toEqual({ body, locs: expect.arrayContaining([loc]) });
    }
    expect(await snapshot(product.id)).toEqual(before);
    const error = await sdk(owner.token).products.update({ id: product.id, productUpdate: { prices: [{ id: other.prices[0].id }] } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0]).toMatchObject({ loc: ['body', 'prices', 0], msg: 'Price does not exist.' });
  });

  it('applies concurrent price changes one after the other, leaving exactly one current set', async () => {
    const product = await create({ name: 'Contended' });
    const responses = await Promise.all(
      [1100, 1200, 1300, 1400, 1500].map((amount) => v1(owner.token, 'PATCH', `/products/${product.id}`, { prices: [{ amount_type: 'fixed', price_amount: amount }] })),
    );
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const current = await daemon.db('product_prices').where({ product_id: product.id, is_archived: false });
    expect(current).toHaveLength(1);
    expect((await sdk(owner.token).products.get({ id: product.id })).prices.map((p) => p.id)).toEqual([current[0].id]);
    expect(await daemon.db('product_prices').where({ product_id: product.id })).toHaveLength(6);
  });

  it('archives and unarchives a product, which stays readable (archiving deletes nothing)', async () => {
    const product = await create({ name: 'Seasonal' });
    const archived = await sdk(owner.token).products.update({ id: product.id, productUpdate: { isArchived: true } });
    expect(archived).toMatchObject({ isArchived: true, prices: product.prices });
    expect((await sdk(owner.token).products.get({ id: product.id })).isArchived).toBe(true);
    expect((await sdk(owner.token).products.list({ organizationId, isArchived: true })).result.items.map((p) => p.id)).toContain(product.id);
    expect((await sdk(owner.token).products.update({ id: product.id, productUpdate: { isArchived: false } })).isArchived).toBe(false);
    // Deleting is products.delete's (products-delete.test.ts): an archive keeps the product and its prices.
    expect(await daemon.db('products').where({ id: product.id }).first()).toBeDefined();
    expect(await daemon.db('product_prices').where({ product_id: product.id })).toHaveLength(product.prices.length);
  });

  it('sets and clears a trial on a recurring product, and refuses one on a one-time product', async () => {
    const product = await create({ name: 'Trialled' });
    const withTrial = await sdk(owner.token).products.update({ id: product.id, productUpdate: { trialInterval: 'day', trialIntervalCount: 14 } });
    expect(withTrial).toMatchObject({ trialInterval: 'day', trialIntervalCount: 14 });
    expect(await sdk(owner.token).products.update({ id: product.id, productUpdate: { trialInterval: null } })).toMatchObject({ trialInterval: null, trialIntervalCount: null });
    const oneTime = await create({ name: 'Once', recurringInterval: null });
    const error = await sdk(owner.token).products.update({ id: oneTime.id, productUpdate: { trialInterval: 'day', trialIntervalCount: 7 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
  });

  it('replaces media and custom fields in the order given', async () => {
    const [first, second] = [await customField(), await customField()];
    const product = await create({ name: 'Fields', attachedCustomFields: [{ customFieldId: first.id, required: false }] });
    const updated = await sdk(owner.token).products.update({
      id: product.id,
      productUpdate: { attachedCustomFields: [{ customFieldId: second.id, required: true }, { customFieldId: first.id, required: true }] },
    });
    expect(updated.attachedCustomFields.map((f) => [f.customFieldId, f.order, f.required])).toEqual([[second.id, 0, true], [first.id, 1, true]]);
    const kept = await sdk(owner.token).products.update({ id: product.id, productUpdate: { name: 'Fields kept' } });
    expect(kept.attachedCustomFields).toEqual(updated.attachedCustomFields);
    expect((await sdk(owner.token).products.update({ id: product.id, productUpdate: { attachedCustomFields: [], medias: [] } })).attachedCustomFields).toEqual([]);
  });

  it('sets benefits in the order given, answering 200 with full benefits, and writes product.updated', async () => {
    const product = await create({ name: 'Bundle' });
    const [a, b] = [await benefit(owner.token, organizationId, 'First perk'), await benefit(owner.token, organizationId, 'Second perk')];
    const res = await v1(owner.token, 'POST', `/products/${product.id}/benefits`, { benefits: [b.id, a.id] });
    expect(res.status).toBe(200);
    expect((await res.json()).benefits.map((x: { id: string }) => x.id)).toEqual([b.id, a.id]);
    const updated = await sdk(owner.token).products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [a.id, b.id] } });
    expect(updated.benefits.map((x) => [x.id, x.description, x.type])).toEqual([[a.id, 'First perk', 'custom'], [b.id, 'Second perk', 'custom']]);
    expect((await updatedEventsOf(product.id)).at(-1)?.payload.data).toMatchObject({ benefits: [{ id: a.id }, { id: b.id }] });
    expect((await sdk(owner.token).products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [] } })).benefits).toEqual([]);

    const before = await snapshot(product.id);
    const refused = await sdk(owner.token).products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [a.id, a.id, randomUUID()] } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(HTTPValidationError);
    expect((refused as HTTPValidationError).detail?.map((d) => d.loc)).toEqual([['body', 'benefits', 1], ['body', 'benefits', 2]]);
    expect(await snapshot(product.id)).toEqual(before);
  });

  it("never attaches another organization's benefit, file or custom field (422), and changes nothing", async () => {
    const stranger = await signUp(daemon.url);
    const strangerOrg = await createOrganization(stranger, 'Elsewhere');
    const theirBenefit = await benefit(stranger.token, strangerOrg);
    const theirField = await customField(stranger.token, strangerOrg);
    const theirProduct = await create({ name: 'Theirs' }, stranger.token, strangerOrg);
    const product = await create({ name: 'Mine' });
    const before = await snapshot(product.id);

    for (const [call, loc] of [
      [() => sdk(owner.token).products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [theirBenefit.id] } }), ['body', 'benefits', 0]],
      [() => sdk(owner.token).products.update({ id: product.id, productUpdate: { attachedCustomFields: [{ customFieldId: theirField.id, required: true }] } }), ['body', 'attached_custom_fields', 0]],
      [() => sdk(owner.token).products.update({ id: product.id, productUpdate: { prices: [{ id: theirProduct.prices[0].id }] } }), ['body', 'prices', 0]],
      [() => create({ name: 'Borrowing', attachedCustomFields: [{ customFieldId: theirField.id, required: false }] }), ['body', 'attached_custom_fields', 0]],
    ] as const) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HTTPValidationError);
      expect((error as HTTPValidationError).detail?.map((d) => d.loc)).toEqual([loc]);
    }
    expect(await snapshot(product.id)).toEqual(before);
    expect((await sdk(stranger.token).products.get({ id: theirProduct.id })).benefits).toEqual([]);
  });

  it("answers 404 to another organization's product on get, update and benefits, changing nothing", async () => {
    const product = await create({ name: 'Private' });
    const stranger = await signUp(daemon.url);
    await createOrganization(stranger, 'Snoopers');
    const polar = sdk(stranger.token);
    for (const call of [
      () => polar.products.get({ id: product.id }),
      () => polar.products.update({ id: product.id, productUpdate: { name: 'Taken over', isArchived: true } }),
      () => polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [] } }),
    ]) {
      expect(await call().catch((e: unknown) => e)).toBeInstanceOf(ResourceNotFound);
    }
    const planted = await v1(stranger.token, 'POST', '/products/', { name: 'Planted', organization_id: organizationId, prices: [{ amount_type: 'free' }] });
    expect(planted.status).toBe(422);
    expect(await sdk(owner.token).products.get({ id: product.id })).toMatchObject({ name: 'Private', isArchived: false });
  });

  it('lets a member read products, and answers 403 NotPermitted to their changes', async () => {
    const product = await create({ name: 'Members see' });
    const member = await signUp(daemon.url, { name: 'Mia Member' });
    await daemon.auth.api.addMember({ body: { userId: member.user.id, organizationId, role: 'member' } });
    const polar = sdk(member.token);
    expect((await polar.products.get({ id: product.id })).name).toBe('Members see');
    expect((await polar.products.list({ organizationId, limit: 100 })).result.items.map((p) => p.id)).toContain(product.id);
    expect(await polar.products.update({ id: product.id, productUpdate: { name: 'Member edit' } }).catch((e: unknown) => e)).toBeInstanceOf(NotPermitted);
    expect(await polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [] } }).catch((e: unknown) => e)).toBeInstanceOf(NotPermitted);
    const created = await create({ name: 'Member made' }, member.token).catch((e: unknown) => e);
    expect(created).toBeInstanceOf(SDKError);
    expect((created as SDKError).statusCode).toBe(403);
    expect((await sdk(owner.token).products.get({ id: product.id })).name).toBe('Members see');
  });

  it('holds an access token to its scopes: products:read reads, products:write writes', async () => {
    const mint = async (scopes: string[]) =>
      (await (await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'ci', scopes, organization_id: organizationId })).json()).token as string;
    const reader = sdk(await mint(['products:read']));
    const writer = sdk(await mint(['products:write']));
    const unrelated = sdk(await mint(['customers:read']));
    const product: Product = await writer.products.create({ name: 'By token', prices: [{ amountType: 'fixed', priceAmount: 800 }] } as ProductCreate);
    expect(product.organizationId).toBe(organizationId);
    expect((await reader.products.get({ id: product.id })).name).toBe('By token');
    expect((await writer.products.update({ id: product.id, productUpdate: { name: 'By token, renamed' } })).name).toBe('By token, renamed');
    expect(await reader.products.update({ id: product.id, productUpdate: { name: 'Nope' } }).catch((e: unknown) => e)).toBeInstanceOf(NotPermitted);
    const listError = await unrelated.products.list({}).catch((e: unknown) => e);
    expect((listError as SDKError).statusCode).toBe(403);
  });
});

describe('prices from before products carried their interval', () => {
  it('reads a legacy recurring price with legacy: true, and lets its product take an interval once', async () => {
    // Till never creates legacy prices: they only arrive with data imported from Polar, as this row does.
    const product = await create({ name: 'Imported', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1500 }] });
    const now = new Date();
    await daemon.db('product_prices').where({ product_id: product.id }).update({ is_archived: true });
    await insertPrices(daemon.db, [
      { amountType: 'fixed', priceAmount: 1500, id: randomUUID(), productId: product.id, source: 'catalog', priceCurrency: 'usd', taxBehavior: null, isArchived: false, legacyRecurringInterval: 'month', position: 1, createdAt: now, modifiedAt: null },
    ]);
    const legacy = await sdk(owner.token).products.get({ id: product.id });
    expect(legacy.isRecurring).toBe(true);
    expect(legacy.prices).toEqual([expect.objectContaining({ amountType: 'fixed', priceAmount: 1500, type: 'recurring', recurringInterval: 'month', legacy: true })]);

    const migrated = await sdk(owner.token).products.update({ id: product.id, productUpdate: { recurringInterval: 'month' } });
    expect(migrated).toMatchObject({ recurringInterval: 'month', recurringIntervalCount: 1 });
    const current = await create({ name: 'Current' });
    const error = await sdk(owner.token).products.update({ id: current.id, productUpdate: { recurringInterval: 'year' } }).catch((e: unknown) => e);
    expect((error as HTTPValidationError).detail?.[0]).toMatchObject({ loc: ['body', 'recurring_interval'], msg: 'Recurring interval cannot be changed.' });
  });
});

describe('products seen from other domains', () => {
  it('lets a discount be restricted to a product of its organization, and shows it as a discount does', async () => {
    const product = await create({ name: 'Discounted', metadata: { k: 'v' } });
    const discount = await sdk(owner.token).discounts.create({ name: 'Launch', type: 'percentage', duration: 'once', basisPoints: 1000, products: [product.id], organizationId });
    expect(discount.products).toEqual([
      expect.objectContaining({ id: product.id, name: 'Discounted', recurringInterval: 'month', isRecurring: true, isArchived: false, metadata: { k: 'v' }, organizationId }),
    ]);
    await sdk(owner.token).products.update({ id: product.id, productUpdate: { isArchived: true } });
    expect((await sdk(owner.token).discounts.get({ id: discount.id })).products[0].isArchived).toBe(true);
  });

  it('describes the products operations in /openapi.json with their request schemas', async () => {
    const document = await (await fetch(`${daemon.url}/openapi.json`)).json();
    expect(Object.keys(document.paths['/v1/products'])).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/v1/products/{id}'])).toEqual(['get', 'patch', 'delete']);
    expect(document.paths['/v1/products/{id}/benefits'].post['x-scopes']).toEqual(['products:write']);
    expect(JSON.stringify(document.paths['/v1/products'].post.requestBody)).toContain('"minimum_amount"');
    expect(document.paths['/v1/products'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['id', 'organization_id', 'query', 'is_archived', 'is_recurring', 'benefit_id', 'visibility', 'sorting']),
    );
  });
});
