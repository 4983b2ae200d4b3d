import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

// DELETE /v1/products/{id} (Polar's products.delete, in @polar-sh/sdk 1.x): a product nothing uses is deleted with
// its prices, benefits, media and custom fields; one in use is 409 ProductNotDeletable and stays as it was.

let daemon: TestDaemon;
let owner: SignedIn;
let reader: string;
let organizationId: string;

const sdk = (token = owner.token) => polarSdk(daemon.url, token);
const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

async function product(name = 'Starter') {
  const benefit = await sdk().benefits.create({ type: 'custom', description: `Support ${randomUUID().slice(0, 6)}`, organizationId, properties: {} });
  const field = await sdk().customFields.create({ type: 'checkbox', slug: `terms-${randomUUID().slice(0, 8)}`, name: 'Terms', organizationId, properties: {} });
  const created = await sdk().products.create({ organizationId, name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000 }], attachedCustomFields: [{ customFieldId: field.id, required: false }] });
  await sdk().products.updateBenefits({ id: created.id, productBenefitsUpdate: { benefits: [benefit.id] } });
  return created;
}

const rowsOf = async (productId: string) => ({
  products: (await daemon.db('products').where({ id: productId })).length,
  prices: (await daemon.db('product_prices').where({ product_id: productId })).length,
  benefits: (await daemon.db('product_benefits').where({ product_id: productId })).length,
  fields: (await daemon.db('product_custom_fields').where({ product_id: productId })).length,
});

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Dee Lete' });
  organizationId = await createOrganization(owner, 'Delete Shop');
  const token = await v1(owner.token, 'POST', '/organization-access-tokens/', { organization_id: organizationId, comment: 'reader', scopes: ['products:read'] });
  reader = (await token.json()).token;
});
afterAll(async () => {
  await daemon?.close();
});

describe('DELETE /v1/products/{id}', () => {
  it('deletes a product nothing uses, with its prices, benefits and custom fields: 204, then 404', async () => {
    const created = await product();
    expect(await rowsOf(created.id)).toEqual({ products: 1, prices: 1, benefits: 1, fields: 1 });
    const deleted = await v1(owner.token, 'DELETE', `/products/${created.id}`);
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect(await rowsOf(created.id)).toEqual({ products: 0, prices: 0, benefits: 0, fields: 0 });
    expect((await v1(owner.token, 'GET', `/products/${created.id}`)).status).toBe(404);
    expect((await v1(owner.token, 'DELETE', `/products/${created.id}`)).status).toBe(404);
  });

  it('refuses a product a checkout, a discount or a checkout link uses with 409 ProductNotDeletable naming the use, and deletes nothing', async () => {
    const inCheckout = await product('In a checkout');
    await sdk().checkouts.create({ products: [inCheckout.id] });
    // Offered second, not selected: the checkout still lists it.
    const offered = await product('Offered beside');
    const beside = await sdk().checkouts.create({ products: [inCheckout.id, offered.id] });
    expect(beside.productId).toBe(inCheckout.id);
    const inDiscount = await product('In a discount');
    await sdk().discounts.create({ name: 'Ten', type: 'percentage', basisPoints: 1000, duration: 'once', organizationId, products: [inDiscount.id] } as never);
    const inLink = await product('In a link');
    expect((await v1(owner.token, 'POST', '/checkout-links/', { products: [inLink.id], payment_processor: 'stripe' })).status).toBe(201);
    for (const [used, what] of [[inCheckout, 'checkouts'], [offered, 'checkouts'], [inDiscount, 'discounts'], [inLink, 'checkout links']] as const) {
      const refused = await v1(owner.token, 'DELETE', `/products/${used.id}`);
      expect(refused.status).toBe(409);
      expect(await refused.json()).toMatchObject({ error: 'ProductNotDeletable', detail: expect.stringContaining(what) });
      expect(await rowsOf(used.id)).toEqual({ products: 1, prices: 1, benefits: 1, fields: 1 });
    }
    expect((await sdk().checkouts.get({ id: beside.id })).products.map((p) => p.id)).toEqual([inCheckout.id, offered.id]);
  });

  it('refuses a product with orders and a subscription, which can only be archived', async () => {
    const sold = await product('Sold');
    const checkout = await sdk().checkouts.create({ products: [sold.id], customerEmail: 'buyer@example.com' });
    await sdk('').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'US' } } });
    const refused = await v1(owner.token, 'DELETE', `/products/${sold.id}`);
    expect(refused.status).toBe(409);
    expect((await refused.json()).detail).toMatch(/orders, subscriptions or trials/);
    expect((await sdk().products.update({ id: sold.id, productUpdate: { isArchived: true } })).isArchived).toBe(true);
  });

  it('needs products:write, and hides another organization’s product', async () => {
    const kept = await product('Kept');
    expect((await v1(reader, 'DELETE', `/products/${kept.id}`)).status).toBe(403);
    const stranger = await signUp(daemon.url, { name: 'Stranger' });
    await createOrganization(stranger, 'Elsewhere');
    expect((await v1(stranger.token, 'DELETE', `/products/${kept.id}`)).status).toBe(404);
    expect((await v1(undefined, 'DELETE', `/products/${kept.id}`)).status).toBe(401);
    expect(await rowsOf(kept.id)).toEqual({ products: 1, prices: 1, benefits: 1, fields: 1 });
  });

  it('refuses a product that a plan change still being paid moves onto; the change completes once paid', async () => {
    const shop = await createOrganization(owner, 'Slow Card Shop');
    await v1(owner.token, 'PATCH', `/organizations/${shop}/clock`, { sandbox: true });
    const plan = async (name: string, amount: number) => sdk().products.create({ organizationId: shop, name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: amount }] });
    const basic = await plan('Basic', 1000);
    const pro = await plan('Pro', 3000);
    const checkout = await sdk().checkouts.create({ products: [basic.id], customerEmail: 'slow@example.com' });
    await sdk('').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_sandboxProcessing', customerBillingAddress: { country: 'US' } } });
    // The card answers "processing"; the hour on the test clock settles the first charge.
    await v1(owner.token, 'POST', `/organizations/${shop}/clock/advance`, { by: '+1h' });
    const [subscription] = (await (await v1(owner.token, 'GET', `/subscriptions/?organization_id=${shop}`)).json()).items;
    expect(subscription.status).toBe('active');

    const change = await v1(owner.token, 'PATCH', `/subscriptions/${subscription.id}`, { product_id: pro.id, proration_behavior: 'invoice' });
    expect(change.status).toBe(200);
    expect((await change.json()).product_id).toBe(basic.id);
    const refused = await v1(owner.token, 'DELETE', `/products/${pro.id}`);
    expect(refused.status).toBe(409);
    expect((await refused.json()).detail).toContain('a plan change being paid');

    await v1(owner.token, 'POST', `/organizations/${shop}/clock/advance`, { by: '+1h' });
    expect((await (await v1(owner.token, 'GET', `/subscriptions/${subscription.id}`)).json()).product_id).toBe(pro.id);
  });

  it('never lets a deletion and a new use of the product both go through at the same moment', async () => {
    const shop = await createOrganization(owner, 'Race Shop');
    const plan = async (name: string) => (await sdk().products.create({ organizationId: shop, name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000 }] })).id;
    const current = await plan('Current');
    const checkout = await sdk().checkouts.create({ products: [current], customerEmail: 'racer@example.com' });
    await sdk('').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'US' } } });
    const [subscription] = (await (await v1(owner.token, 'GET', `/subscriptions/?organization_id=${shop}`)).json()).items;

    const uses: Record<string, (productId: string) => Promise<Response>> = {
      discount: (productId) => v1(owner.token, 'POST', '/discounts/', { organization_id: shop, name: 'Race', type: 'percentage', basis_points: 1000, duration: 'once', products: [productId] }),
      'checkout link': (productId) => v1(owner.token, 'POST', '/checkout-links/', { products: [productId], payment_processor: 'stripe' }),
      'plan change': (productId) => v1(owner.token, 'PATCH', `/subscriptions/${subscription.id}`, { product_id: productId, proration_behavior: 'prorate' }),
    };
    for (const [what, use] of Object.entries(uses)) {
      for (let round = 0; round < 4; round++) {
        const target = await plan(`${what} ${round}`);
        const [deleted, used] = await Promise.all([v1(owner.token, 'DELETE', `/products/${target}`), use(target)]);
        const outcome = `${what}: delete ${deleted.status}, use ${used.status}`;
        // One of the two wins: the product deleted and the use refused as naming no product, or the use kept and
        // the deletion refused as the product being in use. Never both, never a 500.
        expect([`${what}: delete 204, use 422`, `${what}: delete 409, use ${what === 'plan change' ? 200 : 201}`]).toContain(outcome);
        expect((await daemon.db('products').where({ id: target })).length).toBe(deleted.status === 204 ? 0 : 1);
      }
    }
  });
});

