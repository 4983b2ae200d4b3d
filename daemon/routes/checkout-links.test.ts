import type { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let sdk: Polar;

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);
const product = (input: Record<string, unknown>) => sdk.products.create({ organizationId, ...input } as ProductCreate);
const oneTime = (name: string, priceAmount = 2500, extra: Record<string, unknown> = {}) => product({ name, prices: [{ amountType: 'fixed', priceAmount }], ...extra });
const monthly = (name: string, priceAmount = 900) => product({ name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount }] });

/** Follows a link's public URL once, without following the redirect. */
const follow = (url: string, query = '') => fetch(`${url}${query}`, { redirect: 'manual' });
/** The checkout a redirect opened, read by its client secret as the hosted page does. */
async function openedCheckout(res: Response) {
  const location = new URL(res.headers.get('location')!);
  const secret = location.pathname.split('/').pop()!;
  const checkout = await (await v1(undefined, 'GET', `/checkouts/client/${secret}`)).json();
  return { location, checkout };
}

async function mint(scopes: string[]) {
  const res = await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'links', scopes, organization_id: organizationId });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Lina Links' });
  organizationId = await createOrganization(owner, 'Link Shop');
  sdk = polarSdk(daemon.url, owner.token);
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/checkout-links', () => {
  it('answers 401 Unauthorized to a call without credentials, and 404 to the URL of no link', async () => {
    expect((await v1(undefined, 'GET', '/checkout-links/')).status).toBe(401);
    expect((await v1(undefined, 'POST', '/checkout-links/', { payment_processor: 'stripe', products: [] })).status).toBe(401);
    const res = await follow(`${daemon.url}/v1/checkout-links/polar_cl_nothing/redirect`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'ResourceNotFound' });
  });

  it('creates, gets, lists, updates and deletes a link through the SDK, its answers validated', async () => {
    const ebook = await oneTime('Link Ebook');
    const course = await monthly('Link Course');
    const discount = await sdk.discounts.create({ name: 'Tenth off', type: 'percentage', basisPoints: 1000, duration: 'once', organizationId });
    const created = await sdk.checkoutLinks.create({
      paymentProcessor: 'stripe',
      products: [course.id, ebook.id],
      label: 'Newsletter',
      discountId: discount.id,
      trialInterval: 'day',
      trialIntervalCount: 7,
      successUrl: 'https://shop.example/thanks?checkout_id={CHECKOUT_ID}',
      metadata: { campaign: 'spring' },
    });
    expect(created).toMatchObject({
      paymentProcessor: 'stripe',
      label: 'Newsletter',
      allowDiscountCodes: true,
      requireBillingAddress: false,
      discountId: discount.id,
      trialInterval: 'day',
      trialIntervalCount: 7,
      successUrl: 'https://shop.example/thanks?checkout_id={CHECKOUT_ID}',
      returnUrl: null,
      seats: null,
      metadata: { campaign: 'spring' },
      organizationId,
      modifiedAt: null,
    });
    expect(created.clientSecret).toMatch(/^polar_cl_/);
    expect(created.url).toBe(`${daemon.url}/v1/checkout-links/${created.clientSecret}/redirect`);
    expect(created.products.map((p) => p.id)).toEqual([course.id, ebook.id]);
    expect(created.discount).toMatchObject({ id: discount.id, basisPoints: 1000 });

    expect(await sdk.checkoutLinks.get({ id: created.id })).toEqual(created);
    const other = await sdk.checkoutLinks.create({ paymentProcessor: 'stripe', products: [ebook.id] });
    // Oldest first unless asked otherwise, as Polar; product_id keeps the links offering it.
    expect((await sdk.checkoutLinks.list({ organizationId })).result.items.map((l) => l.id)).toEqual([created.id, other.id]);
    expect((await sdk.checkoutLinks.list({ productId: course.id })).result.items.map((l) => l.id)).toEqual([created.id]);
    expect((await sdk.checkoutLinks.list({ sorting: ['-created_at'] })).result.items.map((l) => l.id)).toEqual([other.id, created.id]);

    // Only one-time products left: the trial goes with the recurring one; null clears the discount and the label.
    const updated = await sdk.checkoutLinks.update({ id: created.id, checkoutLinkUpdate: { products: [ebook.id], discountId: null, label: null, returnUrl: 'https://shop.example/' } });
    expect(updated).toMatchObject({ products: [{ id: ebook.id }], discountId: null, discount: null, label: null, trialInterval: null, trialIntervalCount: null, returnUrl: 'https://shop.example/' });
    expect(updated.modifiedAt).not.toBeNull();

    await sdk.checkoutLinks.delete({ id: other.id });
    await expect(sdk.checkoutLinks.get({ id: other.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await follow(other.url)).status).toBe(404);
  });

  it('takes the deprecated one-product and one-price forms, answering the first product and price too', async () => {
    const ebook = await oneTime('Legacy Ebook', 1200);
    const byProduct = await sdk.checkoutLinks.create({ paymentProcessor: 'stripe', productId: ebook.id });
    const byPrice = await sdk.checkoutLinks.create({ paymentProcessor: 'stripe', productPriceId: ebook.prices[0].id });
    for (const link of [byProduct, byPrice]) expect(link.products.map((p) => p.id)).toEqual([ebook.id]);
    const raw = await (await v1(owner.token, 'GET', `/checkout-links/${byPrice.id}`)).json();
    expect(raw).toMatchObject({ product_id: ebook.id, product_price_id: ebook.prices[0].id, product: { id: ebook.id }, product_price: { id: ebook.prices[0].id } });
  });

  it("refuses products that are archived, drafts, unknown or another organization's, and a discount that does not apply, with Polar's 422s", async () => {
    const archived = await oneTime('Old Ebook');
    await sdk.products.update({ id: archived.id, productUpdate: { isArchived: true } });
    const draft = await oneTime('Draft Ebook', 900, { visibility: 'draft' });
    const live = await oneTime('Live Ebook');
    const res = await v1(owner.token, 'POST', '/checkout-links/', { payment_processor: 'stripe', products: [live.id, archived.id, draft.id, '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b'] });
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual([
      { loc: ['body', 'products', 1], msg: 'Product is archived.', type: 'value_error' },
      { loc: ['body', 'products', 2], msg: 'Product is a draft.', type: 'value_error' },
      { loc: ['body', 'products', 3], msg: 'Product does not exist.', type: 'value_error' },
    ]);

    const stranger = await signUp(daemon.url, { name: 'Stranger' });
    const theirOrg = await createOrganization(stranger, 'Elsewhere');
    const theirs = await polarSdk(daemon.url, stranger.token).products.create({ name: 'Theirs', organizationId: theirOrg, prices: [{ amountType: 'fixed', priceAmount: 900 }] } as ProductCreate);
    const foreign = await sdk.checkoutLinks.create({ paymentProcessor: 'stripe', products: [theirs.id] }).catch((e: unknown) => e);
    expect(foreign).toBeInstanceOf(HTTPValidationError);
    expect((foreign as HTTPValidationError).detail).toEqual([{ loc: ['body', 'products', 0], msg: 'Product does not exist.', type: 'value_error' }]);

    const other = await oneTime('Other Ebook');
    const onlyOther = await sdk.discounts.create({ name: 'Other only', type: 'percentage', basisPoints: 500, duration: 'once', products: [other.id], organizationId });
    const wrongDiscount = await v1(owner.token, 'POST', '/checkout-links/', { payment_processor: 'stripe', products: [live.id], discount_id: onlyOther.id });
    expect(wrongDiscount.status).toBe(422);
    expect((await wrongDiscount.json()).detail).toEqual([{ loc: ['body', 'discount_id'], msg: 'Discount does not exist or is not applicable to this product.', type: 'value_error' }]);

    const link = await sdk.checkoutLinks.create({ paymentProcessor: 'stripe', products: [live.id] });
    const moved = await v1(stranger.token, 'PATCH', `/checkout-links/${link.id}`, { label: 'mine' });
    expect(moved.status).toBe(404);

    for (const body of [{ products: [live.id] }, { payment_processor: 'paypal', products: [live.id] }, { payment_processor: 'stripe' }, { payment_processor: 'stripe', products: [live.id], seats: 3 }]) {
      const bad = await v1(owner.token, 'POST', '/checkout-links/', body);
      expect(bad.status, JSON.stringify(body)).toBe(422);
    }
  });

  it('needs checkout_links:write to change links and checkout_links:read (or write) to read them', async () => {
    const ebook = await oneTime('Scoped Ebook');
    const reader = await mint(['checkout_links:read']);
    const checkoutsOnly = await mint(['checkouts:write', 'products:write']);
    const refused = await v1(reader, 'POST', '/checkout-links/', { payment_processor: 'stripe', products: [ebook.id] });
    expect(refused.status).toBe(403);
    expect((await v1(checkoutsOnly, 'GET', '/checkout-links/')).status).toBe(403);
    const writer = await mint(['checkout_links:write']);
    const made = await v1(writer, 'POST', '/checkout-links/', { payment_processor: 'stripe', products: [ebook.id] });
    expect(made.status).toBe(201);
    const { id } = await made.json();
    expect((await v1(reader, 'GET', `/checkout-links/${id}`)).status).toBe(200);
    expect((await v1(reader, 'DELETE', `/checkout-links/${id}`)).status).toBe(403);
  });
});

describe('a checkout link’s URL', () => {
  it('opens a fresh checkout with the link’s products, discount, trial and metadata and redirects to its page', async () => {
    const course = await monthly('Redirect Course', 1000);
    const ebook = await oneTime('Redirect Ebook', 2000);
    const discount = await sdk.discounts.create({ name: 'Quarter off', type: 'percentage', basisPoints: 2500, duration: 'once', organizationId });
    const link = await sdk.checkoutLinks.create({
      paymentProcessor: 'stripe',
      products: [course.id, ebook.id],
      discountId: discount.id,
      trialInterval: 'week',
      trialIntervalCount: 2,
      requireBillingAddress: true,
      successUrl: 'https://shop.example/thanks?checkout_id={CHECKOUT_ID}',
      metadata: { campaign: 'launch', reference_id: 'from-link' },
    });

    const res = await follow(link.url, '?reference_id=from-query&utm_source=newsletter&utm_campaign=may&customer_email=ada@example.com&customer_name=Ada&ref=abc');
    expect(res.status).toBe(307);
    const { location, checkout } = await openedCheckout(res);
    expect(`${location.origin}${location.pathname}`).toBe(`${daemon.url}/checkout/${checkout.client_secret}`);
    // What prefilled the checkout is consumed; the rest (metadata keys too, as Polar) is passed on to the page.
    expect(Object.fromEntries(location.searchParams)).toEqual({ reference_id: 'from-query', utm_source: 'newsletter', utm_campaign: 'may', ref: 'abc' });
    expect(checkout).toMatchObject({
      status: 'open',
      product_id: course.id,
      products: [{ id: course.id }, { id: ebook.id }],
      discount: { id: discount.id },
      active_trial_interval: 'week',
      active_trial_interval_count: 2,
      require_billing_address: true,
      customer_email: 'ada@example.com',
      customer_name: 'Ada',
      success_url: `https://shop.example/thanks?checkout_id=${checkout.id}`,
    });
    const seller = await sdk.checkouts.get({ id: checkout.id });
    // The link's own keys win over the query's; utm_* the link does not set are added.
    expect(seller.metadata).toEqual({ campaign: 'launch', reference_id: 'from-link', utm_source: 'newsletter', utm_campaign: 'may' });

    const again = await openedCheckout(await follow(link.url));
    expect(again.checkout.id).not.toBe(checkout.id);
  });

  it('selects the product named by product_id, takes a valid discount code and ignores what does not apply', async () => {
    const first = await oneTime('First Poster', 3000);
    const second = await oneTime('Second Poster', 4000);
    await sdk.discounts.create({ name: 'Ten off', type: 'fixed', amounts: { usd: 1000 }, duration: 'once', code: 'TENOFF', organizationId });
    const link = await sdk.checkoutLinks.create({ paymentProcessor: 'stripe', products: [first.id, second.id] });

    const picked = await openedCheckout(await follow(link.url, `?product_id=${second.id}&discount_code=tenoff`));
    expect(picked.checkout).toMatchObject({ product_id: second.id, amount: 4000, discount_amount: 1000, total_amount: 3000 });

    const ignored = await openedCheckout(await follow(link.url, `?product_id=${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}&discount_code=NOPE&customer_email=not-an-email`));
    expect(ignored.checkout).toMatchObject({ product_id: first.id, discount: null, customer_email: null, total_amount: 3000 });

    const badId = await follow(link.url, '?product_id=not-a-uuid');
    expect(badId.status).toBe(422);
    expect((await badId.json()).detail).toEqual([expect.objectContaining({ loc: ['query', 'product_id'] })]);
  });

  it('answers 422 when none of the link’s products can be sold any more', async () => {
    const gone = await oneTime('Gone Ebook');
    const link = await sdk.checkoutLinks.create({ paymentProcessor: 'stripe', products: [gone.id] });
    await sdk.products.update({ id: gone.id, productUpdate: { isArchived: true } });
    const res = await follow(link.url);
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual([{ loc: ['body', 'products'], msg: 'No valid products.', type: 'value_error' }]);
  });
});
