import type { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { AlreadyCanceledSubscription } from '@polar-sh/sdk/models/errors/alreadycanceledsubscription.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let sdk: Polar;
let anonymous: Polar;

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);
const monthly = (name: string, priceAmount: number) =>
  sdk.products.create({ organizationId, name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount }] } as ProductCreate);

/** A subscription started the way a customer starts one: a checkout confirmed with a sandbox test token. */
async function subscribe(productId: string, email: string, token = 'tok_visa') {
  const checkout = await sdk.checkouts.create({ products: [productId], customerEmail: email });
  await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: token, customerBillingAddress: { country: 'NL' } } });
  const after = await sdk.checkouts.get({ id: checkout.id });
  expect(after.subscriptionId).toBeTruthy();
  return after.subscriptionId!;
}

const advance = async (by: string) => {
  const res = await v1(owner.token, 'POST', `/organizations/${organizationId}/clock/advance`, { by });
  expect(res.status).toBe(200);
  return res.json();
};

const eventTypes = async (subscriptionId: string) =>
  (await listEvents(daemon.db, organizationId)).filter((e) => e.payload.type.startsWith('subscription.') && (e.payload.data as { id: string }).id === subscriptionId).map((e) => e.payload.type);

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Sam Subscriptions' });
  organizationId = await createOrganization(owner, 'Subscription Shop');
  sdk = polarSdk(daemon.url, owner.token);
  anonymous = polarSdk(daemon.url, '');
  expect((await v1(owner.token, 'PATCH', `/organizations/${organizationId}/clock`, { sandbox: true })).status).toBe(200);
});
afterAll(async () => {
  for (const line of daemon?.logs ?? []) if (line.err) console.error(JSON.stringify(line.err).slice(0, 3000));
  await daemon?.close();
});

describe('/v1/subscriptions', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    expect((await v1(undefined, 'GET', '/subscriptions/')).status).toBe(401);
    expect((await v1(undefined, 'PATCH', '/subscriptions/x', { cancel_at_period_end: true })).status).toBe(401);
    expect((await v1(undefined, 'DELETE', '/subscriptions/x')).status).toBe(401);
  });

  it('gets and lists a subscription started by a checkout, in the shape the SDK validates', async () => {
    const pro = await monthly('Pro Monthly', 1500);
    const id = await subscribe(pro.id, 'list@example.com');
    const got = await sdk.subscriptions.get({ id });
    expect(got).toMatchObject({ id, status: 'active', amount: 1500, currency: 'usd', recurringInterval: 'month', recurringIntervalCount: 1, productId: pro.id, cancelAtPeriodEnd: false, meters: [], pendingUpdate: null });
    expect(got.customer.email).toBe('list@example.com');
    expect(got.product.id).toBe(pro.id);
    expect(got.prices.map((p) => p.id)).toEqual([pro.prices[0].id]);
    const days = (got.currentPeriodEnd.getTime() - got.currentPeriodStart.getTime()) / 86_400_000;
    expect(days).toBeGreaterThanOrEqual(28);
    expect(days).toBeLessThanOrEqual(31);

    const byProduct = await sdk.subscriptions.list({ productId: pro.id });
    expect(byProduct.result.items.map((s) => s.id)).toEqual([id]);
    expect((await sdk.subscriptions.list({ customerId: got.customerId, active: true })).result.items).toHaveLength(1);
    expect((await sdk.subscriptions.list({ productId: pro.id, active: false })).result.items).toHaveLength(0);
    expect((await sdk.subscriptions.list({ productId: pro.id, status: ['past_due'] })).result.items).toHaveLength(0);
    expect(await eventTypes(id)).toEqual(['subscription.created', 'subscription.active']);
  });

  it('cancels at the period end with a reason, uncancels, and ends at the period end on the test clock', async () => {
    const plan = await monthly('Cancel Plan', 900);
    const id = await subscribe(plan.id, 'cancel@example.com');
    const canceled = await sdk.subscriptions.update({
      id,
      subscriptionUpdate: { cancelAtPeriodEnd: true, customerCancellationReason: 'too_expensive', customerCancellationComment: 'Pricey' },
    });
    expect(canceled).toMatchObject({ status: 'active', cancelAtPeriodEnd: true, customerCancellationReason: 'too_expensive', customerCancellationComment: 'Pricey' });
    expect(canceled.endsAt).toEqual(canceled.currentPeriodEnd);
    expect(canceled.canceledAt).not.toBeNull();

    // As Polar: canceling again while a cancellation is pending is 403 and changes nothing.
    await expect(sdk.subscriptions.update({ id, subscriptionUpdate: { cancelAtPeriodEnd: true, customerCancellationReason: 'unused' } })).rejects.toBeInstanceOf(AlreadyCanceledSubscription);
    expect(await sdk.subscriptions.get({ id })).toMatchObject({ customerCancellationReason: 'too_expensive', customerCancellationComment: 'Pricey' });

    const uncanceled = await sdk.subscriptions.update({ id, subscriptionUpdate: { cancelAtPeriodEnd: false } });
    expect(uncanceled).toMatchObject({ cancelAtPeriodEnd: false, endsAt: null, canceledAt: null, customerCancellationReason: null });
    // Nothing left to take back: 400, as Polar.
    const again = await v1(owner.token, 'PATCH', `/subscriptions/${id}`, { cancel_at_period_end: false });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 'BadRequest', code: 'SUBSCRIPTION_NOT_CANCELING' });

    await sdk.subscriptions.update({ id, subscriptionUpdate: { cancelAtPeriodEnd: true } });
    await advance('+32d');
    const ended = await sdk.subscriptions.get({ id });
    expect(ended).toMatchObject({ status: 'canceled', cancelAtPeriodEnd: false });
    expect(ended.endedAt).toEqual(canceled.currentPeriodEnd);
    expect(await daemon.db('orders').where({ subscription_id: id, billing_reason: 'subscription_cycle' })).toHaveLength(0);
    expect(await eventTypes(id)).toEqual([
      'subscription.created', 'subscription.active',
      'subscription.updated', 'subscription.canceled',
      'subscription.updated', 'subscription.uncanceled',
      'subscription.updated', 'subscription.canceled',
      'subscription.updated', 'subscription.revoked',
    ]);
    // An ended subscription has nothing to take back: 410 ResourceUnavailable, as Polar; nor can it be canceled again.
    const gone = await v1(owner.token, 'PATCH', `/subscriptions/${id}`, { cancel_at_period_end: false });
    expect(gone.status).toBe(410);
    expect(await gone.json()).toMatchObject({ error: 'ResourceUnavailable', code: 'SUBSCRIPTION_ENDED' });
    await expect(sdk.subscriptions.update({ id, subscriptionUpdate: { cancelAtPeriodEnd: true } })).rejects.toBeInstanceOf(AlreadyCanceledSubscription);
    // Polar's `active` filter: an ended subscription is listed under active=false, not under active=true.
    expect((await sdk.subscriptions.list({ productId: plan.id, active: false })).result.items.map((s) => s.id)).toEqual([id]);
    expect((await sdk.subscriptions.list({ productId: plan.id, active: true })).result.items).toEqual([]);
  });

  it("lists a customer as active (customers.list active) while it holds a billable subscription, and as not active once it is revoked", async () => {
    const plan = await monthly('Active Filter Plan', 900);
    const email = `active-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const id = await subscribe(plan.id, email);
    const idle = `idle-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const bystander = await sdk.customers.create({ organizationId, email: idle });
    const ids = async (active: boolean, who: string) => (await sdk.customers.list({ organizationId, active, email: who })).result;
    expect(await ids(true, email)).toMatchObject({ items: [{ email }], pagination: { totalCount: 1, maxPage: 1 } });
    expect((await ids(false, email)).items).toEqual([]);
    expect((await ids(true, idle)).items).toEqual([]);
    expect((await ids(false, idle)).items.map((c) => c.id)).toEqual([bystander.id]);
    const activeIds = (await sdk.customers.list({ organizationId, active: true, limit: 100 })).result.items.map((c) => c.id);
    expect(activeIds).not.toContain(bystander.id);
    await sdk.subscriptions.revoke({ id });
    expect((await ids(true, email)).items).toEqual([]);
    expect(await ids(false, email)).toMatchObject({ items: [{ email }], pagination: { totalCount: 1, maxPage: 1 } });
  });

  it('revokes now through DELETE, revoking the benefits, and refuses to revoke twice', async () => {
    const plan = await monthly('Revoke Plan', 700);
    const note = await sdk.benefits.create({ type: 'custom', description: 'Members note', organizationId, properties: { note: 'Welcome' } });
    await sdk.products.updateBenefits({ id: plan.id, productBenefitsUpdate: { benefits: [note.id] } });
    const id = await subscribe(plan.id, 'revoke@example.com');
    const grant = () => daemon.db('benefit_grants').where({ subscription_id: id, benefit_id: note.id }).first();
    expect(await grant()).toMatchObject({ revoked_at: null });
    expect((await grant()).granted_at).not.toBeNull();
    const revoked = await sdk.subscriptions.revoke({ id });
    expect(revoked).toMatchObject({ id, status: 'canceled', cancelAtPeriodEnd: false });
    expect(revoked.endedAt).not.toBeNull();
    expect(await eventTypes(id)).toEqual(['subscription.created', 'subscription.active', 'subscription.updated', 'subscription.canceled', 'subscription.revoked']);
    expect((await grant()).revoked_at).not.toBeNull();
    await expect(sdk.subscriptions.revoke({ id })).rejects.toBeInstanceOf(AlreadyCanceledSubscription);
    const patched = await v1(owner.token, 'PATCH', `/subscriptions/${id}`, { revoke: true });
    expect(patched.status).toBe(403);
    expect(await patched.json()).toMatchObject({ error: 'AlreadyCanceledSubscription' });
  });

  it('changes product with invoice proration: an order for the prorated difference, charged now', async () => {
    const basic = await monthly('Basic', 1000);
    const premium = await monthly('Premium', 3000);
    const id = await subscribe(basic.id, 'upgrade-invoice@example.com');
    const changed = await sdk.subscriptions.update({ id, subscriptionUpdate: { productId: premium.id, prorationBehavior: 'invoice' } });
    expect(changed).toMatchObject({ productId: premium.id, amount: 3000, status: 'active' });
    expect(changed.prices.map((p) => p.id)).toEqual([premium.prices[0].id]);
    const order = await daemon.db('orders').where({ subscription_id: id, billing_reason: 'subscription_update' }).first();
    expect(order).toMatchObject({ status: 'paid' });
    // Changed right after the period started: nearly the whole difference of 2000 is due.
    expect(Number(order.total_amount)).toBeGreaterThan(1900);
    expect(Number(order.total_amount)).toBeLessThanOrEqual(2000);
    const items = await daemon.db('order_items').where({ order_id: order.id }).orderBy('amount', 'desc');
    expect(items.map((i) => Boolean(i.proration))).toEqual([true, true]);
    expect(items[0].label).toBe('Remaining time on Premium');
    expect(items[1].label).toBe('Unused time on Basic');
    expect(await daemon.db('payments').where({ order_id: order.id, status: 'succeeded' })).toHaveLength(1);
  });

  it('changes product with prorate: the difference waits for the next renewal order', async () => {
    const basic = await monthly('Basic Prorate', 1000);
    const premium = await monthly('Premium Prorate', 3000);
    const id = await subscribe(basic.id, 'upgrade-prorate@example.com');
    await sdk.subscriptions.update({ id, subscriptionUpdate: { productId: premium.id, prorationBehavior: 'prorate' } });
    expect(await daemon.db('orders').where({ subscription_id: id, billing_reason: 'subscription_update' })).toHaveLength(0);
    await advance('+32d');
    const renewal = await daemon.db('orders').where({ subscription_id: id, billing_reason: 'subscription_cycle' }).first();
    expect(renewal).toMatchObject({ status: 'paid' });
    // The new price for the new period, plus the prorated difference of the old one.
    expect(Number(renewal.subtotal_amount)).toBeGreaterThan(3000 + 1900);
    const items = await daemon.db('order_items').where({ order_id: renewal.id });
    expect(items.filter((i) => Boolean(i.proration))).toHaveLength(2);
  });

  it('moves a subscription onto another price of its product (POST /v1/catalog/price-migrations), a repeat changing nothing', async () => {
    const plan = await monthly('Migrating Plan', 1000);
    const other = await monthly('Other Plan', 2000);
    const oldPrice = plan.prices[0].id;
    const id = await subscribe(plan.id, 'migrate@example.com');
    // A new price, the old one archived: the subscription stays on the old one.
    const updated = await sdk.products.update({ id: plan.id, productUpdate: { prices: [{ amountType: 'fixed', priceAmount: 1200 }] } as never });
    const newPrice = updated.prices.find((price) => !price.isArchived)!.id;
    expect((await sdk.subscriptions.get({ id })).prices.map((price) => price.id)).toEqual([oldPrice]);

    const refuse = async (body: unknown, field: string) => {
      const res = await v1(owner.token, 'POST', '/catalog/price-migrations', body);
      expect(res.status).toBe(422);
      expect((await res.json()).detail[0].loc).toEqual(['body', field]);
    };
    await refuse({ subscription_id: id, price_id: other.prices[0].id }, 'price_id');
    await refuse({ subscription_id: id, price_id: oldPrice.replace(/.$/, (c) => (c === '0' ? '1' : '0')) }, 'price_id');
    await refuse({ subscription_id: id, price_id: newPrice, proration_behavior: 'sometimes' }, 'proration_behavior');
    expect((await v1(owner.token, 'POST', '/catalog/price-migrations', { subscription_id: 'nope', price_id: newPrice })).status).toBe(404);

    const moved = await v1(owner.token, 'POST', '/catalog/price-migrations', { subscription_id: id, price_id: newPrice, proration_behavior: 'prorate' });
    expect(moved.status).toBe(200);
    expect(await moved.json()).toMatchObject({ id, product_id: plan.id, amount: 1200, prices: [{ id: newPrice }] });
    expect(await eventTypes(id)).toContain('subscription.updated');
    const events = (await eventTypes(id)).length;
    // Already there: answered as it is, nothing announced.
    const again = await v1(owner.token, 'POST', '/catalog/price-migrations', { subscription_id: id, price_id: newPrice });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ amount: 1200, prices: [{ id: newPrice }] });
    expect(await eventTypes(id)).toHaveLength(events);
    // Back onto an archived price: refused.
    await refuse({ subscription_id: id, price_id: oldPrice }, 'price_id');
  });

  it('applies a discount from the next renewal and counts its redemption', async () => {
    const plan = await monthly('Discounted', 2000);
    const id = await subscribe(plan.id, 'discount@example.com');
    const discount = await sdk.discounts.create({ name: 'Half', type: 'percentage', basisPoints: 5000, duration: 'forever', organizationId });
    const updated = await sdk.subscriptions.update({ id, subscriptionUpdate: { discountId: discount.id } });
    expect(updated.discountId).toBe(discount.id);
    expect(updated.discount?.id).toBe(discount.id);
    expect((await sdk.discounts.get({ id: discount.id })).redemptionsCount).toBe(1);
    await advance('+32d');
    const renewal = await daemon.db('orders').where({ subscription_id: id, billing_reason: 'subscription_cycle' }).first();
    expect(renewal).toMatchObject({ discount_id: discount.id });
    expect(Number(renewal.net_amount)).toBe(1000);
  });

  it('answers bad input with a 422 that names the field, and an unknown subscription with a 404', async () => {
    const plan = await monthly('Validated', 1000);
    const id = await subscribe(plan.id, 'validate@example.com');
    for (const body of [{}, { cancel_at_period_end: 'yes' }, { cancel_at_period_end: true, customer_cancellation_reason: 'bored' }, { revoke: false }, { product_id: plan.id, proration_behavior: 'later' }]) {
      const res = await v1(owner.token, 'PATCH', `/subscriptions/${id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect((await res.json()).detail[0].loc[0]).toBe('body');
    }
    await expect(sdk.subscriptions.update({ id, subscriptionUpdate: { productId: plan.id } })).rejects.toBeInstanceOf(HTTPValidationError);
    const oneTime = await sdk.products.create({ organizationId, name: 'One time', prices: [{ amountType: 'fixed', priceAmount: 500 }] } as ProductCreate);
    const refused = await v1(owner.token, 'PATCH', `/subscriptions/${id}`, { product_id: oneTime.id });
    expect(await refused.json()).toMatchObject({ detail: [{ loc: ['body', 'product_id'], msg: 'This product is not a subscription product.' }] });
    await expect(sdk.subscriptions.get({ id: '00000000-0000-4000-8000-000000000000' })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await sdk.subscriptions.get({ id })).status).toBe('active');
  });

  it('hides another organization’s subscriptions and lets a read-only token read but not change', async () => {
    const plan = await monthly('Private', 1000);
    const id = await subscribe(plan.id, 'private@example.com');
    const stranger = await signUp(daemon.url);
    await createOrganization(stranger, 'Elsewhere');
    await expect(polarSdk(daemon.url, stranger.token).subscriptions.get({ id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await v1(stranger.token, 'DELETE', `/subscriptions/${id}`)).status).toBe(404);

    const token = await (await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'reader', scopes: ['subscriptions:read'], organization_id: organizationId })).json();
    expect((await v1(token.token, 'GET', `/subscriptions/${id}`)).status).toBe(200);
    expect((await v1(token.token, 'PATCH', `/subscriptions/${id}`, { cancel_at_period_end: true })).status).toBe(403);
    expect((await sdk.subscriptions.get({ id })).cancelAtPeriodEnd).toBe(false);
  });

  it('documents the four PATCH forms in /openapi.json', async () => {
    const document = await (await fetch(`${daemon.url}/openapi.json`)).json();
    const schema = document.paths['/v1/subscriptions/{id}'].patch.requestBody.content['application/json'].schema;
    expect(schema.anyOf.map((form: { required: string[] }) => form.required[0]).sort()).toEqual(['cancel_at_period_end', 'discount_id', 'product_id', 'revoke']);
  });

  it('lets exactly one of ten concurrent revokes win, announcing it once', async () => {
    const plan = await monthly('Raced', 800);
    const id = await subscribe(plan.id, 'race@example.com');
    const answers = await Promise.all(Array.from({ length: 10 }, () => v1(owner.token, 'DELETE', `/subscriptions/${id}`)));
    expect(answers.map((res) => res.status).sort()).toEqual([200, 403, 403, 403, 403, 403, 403, 403, 403, 403]);
    expect((await eventTypes(id)).filter((type) => type === 'subscription.revoked')).toHaveLength(1);
  });

  it('filters as Polar: active is trialing or active (not past due), not active is canceled or unpaid, and started_after/before bound the start', async () => {
    // An organization of its own: its test clock moves without moving this file's other subscriptions.
    const shop = await createOrganization(owner, 'Past Due Shop');
    expect((await v1(owner.token, 'PATCH', `/organizations/${shop}/clock`, { sandbox: true })).status).toBe(200);
    const product = await sdk.products.create({ organizationId: shop, name: 'Dunned', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 700 }] } as ProductCreate);
    const checkout = await sdk.checkouts.create({ products: [product.id], customerEmail: 'late@example.com' });
    // Paid at the checkout, declined off-session at the renewal: past due.
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_chargeCustomerFail', customerBillingAddress: { country: 'NL' } } });
    const id = (await sdk.checkouts.get({ id: checkout.id })).subscriptionId!;
    const started = (await sdk.subscriptions.get({ id })).startedAt!;
    expect((await v1(owner.token, 'POST', `/organizations/${shop}/clock/advance`, { by: '+32d' })).status).toBe(200);
    await expect.poll(async () => (await sdk.subscriptions.get({ id })).status).toBe('past_due');

    const listed = async (query: string) => (await (await v1(owner.token, 'GET', `/subscriptions/?organization_id=${shop}&${query}`)).json()).items.map((s: { id: string }) => s.id);
    expect(await listed('active=true')).toEqual([]);
    expect(await listed('active=false')).toEqual([]);
    expect(await listed('status=past_due')).toEqual([id]);
    expect(await listed(`started_after=${new Date(started.getTime() - 1000).toISOString()}`)).toEqual([id]);
    expect(await listed(`started_after=${new Date(started.getTime() + 1000).toISOString()}`)).toEqual([]);
    expect(await listed(`started_before=${new Date(started.getTime() + 1000).toISOString()}`)).toEqual([id]);
    expect((await v1(owner.token, 'GET', '/subscriptions/?started_after=yesterday')).status).toBe(422);
  });
});
