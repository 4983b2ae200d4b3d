import type { Polar } from '@polar-sh/sdk';
import type { Event } from '@polar-sh/sdk/models/components/event.js';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Json, v1Request } from '../testing/v1.js';

// Polar's lifecycle system events (issue 18): what a purchase, a refund and a subscription's life write beside the
// user's events, read back through GET /v1/events raw and through @polar-sh/sdk 0.49, whose models validate each.

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let sdk: Polar;
let anonymous: Polar;

interface WireEvent {
  id: string;
  name: string;
  source: string;
  label: string;
  customer_id: string | null;
  external_customer_id: string | null;
  customer: { id: string } | null;
  timestamp: string;
  metadata: Record<string, any>;
}

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);
const json = <T = any>(method: string, path: string, body?: unknown) => v1Json<T>(daemon.url, owner.token, method, path, body);

/** The system events of a customer, oldest first, as the API answers them. */
async function systemEventsOf(customerId: string): Promise<WireEvent[]> {
  const page = await json<{ items: WireEvent[] }>('GET', `/events/?customer_id=${customerId}&source=system&sorting=timestamp&limit=100`);
  return page.items;
}
const names = (events: WireEvent[]) => events.map((e) => e.name);
const named = (events: WireEvent[], name: string) => events.filter((e) => e.name === name);

/** Every event of a customer through the SDK, which throws on any answer its models refuse. */
async function sdkEventsOf(customerId: string): Promise<Event[]> {
  const page = await sdk.events.list({ customerId, limit: 100 });
  if (!('pagination' in page)) throw new Error('events.list answered a cursor page');
  expect(page.pagination).toMatchObject({ maxPage: 1 });
  return page.items;
}

async function buy(productId: string, email: string) {
  const checkout = await sdk.checkouts.create({ products: [productId], customerEmail: email });
  await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'NL' } } });
  const done = await sdk.checkouts.get({ id: checkout.id });
  expect(done.status).toBe('succeeded');
  return { checkoutId: checkout.id, customerId: done.customerId!, subscriptionId: done.subscriptionId };
}

const advance = async (by: string) => {
  const res = await v1(owner.token, 'POST', `/organizations/${organizationId}/clock/advance`, { by });
  expect(res.status).toBe(200);
  expect((await res.json()).jobs_failed).toBe(0);
};

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Sid System' });
  organizationId = await createOrganization(owner, 'Lifecycle Shop');
  sdk = polarSdk(daemon.url, owner.token);
  anonymous = polarSdk(daemon.url, '');
  expect((await v1(owner.token, 'PATCH', `/organizations/${organizationId}/clock`, { sandbox: true })).status).toBe(200);
});
afterAll(async () => {
  for (const line of daemon?.logs ?? []) if (line.err) console.error(JSON.stringify(line.err).slice(0, 3000));
  await daemon?.close();
});

describe('lifecycle system events in /v1/events', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    expect((await v1(undefined, 'GET', '/events/?source=system')).status).toBe(401);
  });

  it('records customer.created, order.paid, benefit.granted and order.refunded for a purchase and its refund', async () => {
    const benefit = await sdk.benefits.create({ organizationId, type: 'custom', description: 'Support line', properties: { note: 'Call us' } });
    const product = await sdk.products.create({ organizationId, name: 'E-book', prices: [{ amountType: 'fixed', priceAmount: 2500 }] });
    await sdk.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [benefit.id] } });
    const { checkoutId, customerId } = await buy(product.id, 'reader@example.com');
    const [order] = (await sdk.orders.list({ customerId })).result.items;

    const bought = await systemEventsOf(customerId);
    expect(names(bought)).toEqual(['customer.created', 'order.paid', 'benefit.granted']);
    for (const event of bought) expect(event).toMatchObject({ source: 'system', customer_id: customerId, customer: { id: customerId } });
    expect(bought[0]).toMatchObject({ label: 'Customer Created', metadata: { customer_id: customerId, customer_email: 'reader@example.com', customer_name: null, customer_external_id: null } });
    expect(named(bought, 'order.paid')[0]).toMatchObject({ label: 'Order Paid' });
    expect(named(bought, 'order.paid')[0]!.metadata).toEqual({
      order_id: order!.id,
      product_id: product.id,
      billing_type: 'one_time',
      amount: order!.totalAmount,
      currency: 'usd',
      net_amount: 2500,
      tax_amount: order!.taxAmount,
      applied_balance_amount: 0,
      discount_amount: 0,
      platform_fee: order!.platformFeeAmount,
    });
    expect(named(bought, 'benefit.granted')[0]!.metadata).toEqual({ benefit_id: benefit.id, benefit_grant_id: expect.any(String), benefit_type: 'custom' });

    await sdk.refunds.create({ orderId: order!.id, amount: 1000, reason: 'customer_request' });
    const refunded = named(await systemEventsOf(customerId), 'order.refunded');
    expect(refunded).toHaveLength(1);
    expect(refunded[0]!.metadata).toEqual({ order_id: order!.id, refunded_amount: 1000, currency: 'usd' });

    // The checkout's own event belongs to no customer, as Polar's does.
    const checkouts = await json<{ items: WireEvent[] }>('GET', `/events/?organization_id=${organizationId}&name=checkout.created&limit=100`);
    const ours = checkouts.items.filter((e) => e.metadata.checkout_id === checkoutId);
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatchObject({ source: 'system', customer_id: null, customer: null, label: 'Checkout Created', metadata: { checkout_id: checkoutId, checkout_status: 'open', product_id: product.id } });

    // One event by id, and the whole list through the SDK's models.
    const one = await sdk.events.get({ id: refunded[0]!.id });
    expect(one).toMatchObject({ source: 'system', name: 'order.refunded', metadata: { orderId: order!.id, refundedAmount: 1000, currency: 'usd' } });
    const viaSdk = await sdkEventsOf(customerId);
    expect(viaSdk.map((e) => e.name).sort()).toEqual(['benefit.granted', 'customer.created', 'order.paid', 'order.refunded']);
  });

  it('records a subscription from its start through a cancel, an uncancel, a change of plan, a renewal and its revocation', async () => {
    const monthly = (name: string, priceAmount: number) => sdk.products.create({ organizationId, name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount }] } as ProductCreate);
    const basic = await monthly('Basic', 1000);
    const pro = await monthly('Pro', 3000);
    const { customerId, subscriptionId } = await buy(basic.id, 'subscriber@example.com');
    const id = subscriptionId!;
    const started = await sdk.subscriptions.get({ id });

    await sdk.subscriptions.update({ id, subscriptionUpdate: { cancelAtPeriodEnd: true, customerCancellationReason: 'too_expensive', customerCancellationComment: 'Pricey' } });
    await sdk.subscriptions.update({ id, subscriptionUpdate: { cancelAtPeriodEnd: false } });
    await sdk.subscriptions.update({ id, subscriptionUpdate: { productId: pro.id, prorationBehavior: 'prorate' } });
    await advance('+1month');
    await sdk.subscriptions.revoke({ id });

    const events = await systemEventsOf(customerId);
    expect(names(events)).toEqual([
      'customer.created',
      'subscription.created',
      'order.paid',
      'subscription.canceled',
      'subscription.uncanceled',
      'subscription.product_updated',
      'subscription.updated',
      'subscription.cycled',
      'order.paid',
      'subscription.canceled',
      'subscription.revoked',
    ]);
    const basics = { subscription_id: id, currency: 'usd', recurring_interval: 'month', recurring_interval_count: 1 };
    expect(named(events, 'subscription.created')[0]!.metadata).toEqual({ ...basics, product_id: basic.id, amount: 1000, started_at: started.startedAt!.toISOString() });
    const [canceled, revokedCancel] = named(events, 'subscription.canceled');
    expect(canceled!.metadata).toEqual({
      ...basics,
      product_id: basic.id,
      amount: 1000,
      customer_cancellation_reason: 'too_expensive',
      customer_cancellation_comment: 'Pricey',
      canceled_at: expect.any(String),
      ends_at: started.currentPeriodEnd.toISOString(),
      cancel_at_period_end: true,
    });
    expect(revokedCancel!.metadata).toMatchObject({ cancel_at_period_end: false, product_id: pro.id });
    expect(named(events, 'subscription.uncanceled')[0]!.metadata).toEqual({ ...basics, product_id: basic.id, amount: 1000 });
    expect(named(events, 'subscription.product_updated')[0]!.metadata).toEqual({ subscription_id: id, old_product_id: basic.id, new_product_id: pro.id });
    expect(named(events, 'subscription.updated')[0]!.metadata).toEqual({ subscription_id: id, product_id: pro.id, proration_behavior: 'prorate' });
    expect(named(events, 'subscription.cycled')[0]!.metadata).toEqual({ ...basics, product_id: pro.id, amount: 3000 });
    const renewal = named(events, 'order.paid')[1]!;
    expect(renewal.metadata).toMatchObject({ billing_type: 'recurring', subscription_id: id, product_id: pro.id, recurring_interval: 'month', recurring_interval_count: 1 });
    expect(named(events, 'subscription.revoked')[0]!.metadata).toEqual({ ...basics, product_id: pro.id, amount: 3000 });

    // The SDK's models accept every one of them (its union has a model per system event name).
    const viaSdk = await sdkEventsOf(customerId);
    expect(viaSdk.filter((e) => e.source === 'system')).toHaveLength(events.length);
  });

  it('records an invoiced change of plan, once its payment went through, with proration_behavior invoice and its order.paid', async () => {
    const monthly = (name: string, priceAmount: number) => sdk.products.create({ organizationId, name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount }] } as ProductCreate);
    const small = await monthly('Small', 1000);
    const large = await monthly('Large', 5000);
    const { customerId, subscriptionId } = await buy(small.id, 'upgrader@example.com');
    const moved = await sdk.subscriptions.update({ id: subscriptionId!, subscriptionUpdate: { productId: large.id, prorationBehavior: 'invoice' } });
    expect(moved.productId).toBe(large.id);
    const events = await systemEventsOf(customerId);
    expect(names(events).indexOf('subscription.product_updated')).toBe(names(events).indexOf('subscription.updated') - 1);
    expect(named(events, 'subscription.updated').map((e) => e.metadata)).toEqual([{ subscription_id: subscriptionId, product_id: large.id, proration_behavior: 'invoice' }]);
    expect(named(events, 'subscription.product_updated').map((e) => e.metadata)).toEqual([{ subscription_id: subscriptionId, old_product_id: small.id, new_product_id: large.id }]);
    const orders = named(events, 'order.paid');
    expect(orders).toHaveLength(2);
    expect(orders[1]!.metadata).toMatchObject({ subscription_id: subscriptionId, product_id: large.id, billing_type: 'recurring' });
  });

  it("records benefit.cycled at a paid renewal and subscription.past_due at a declined one, for each subscription's customer", async () => {
    // An organization of its own: its test clock moves without moving this file's other subscriptions.
    const shop = await createOrganization(owner, 'Renewal Shop');
    expect((await v1(owner.token, 'PATCH', `/organizations/${shop}/clock`, { sandbox: true })).status).toBe(200);
    const benefit = await sdk.benefits.create({ organizationId: shop, type: 'custom', description: 'Members area', properties: { note: 'Welcome' } });
    const product = await sdk.products.create({ organizationId: shop, name: 'Club', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 700 }] } as ProductCreate);
    await sdk.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [benefit.id] } });
    const start = async (email: string, token: string) => {
      const checkout = await sdk.checkouts.create({ products: [product.id], customerEmail: email });
      await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: token, customerBillingAddress: { country: 'NL' } } });
      const done = await sdk.checkouts.get({ id: checkout.id });
      return { customerId: done.customerId!, subscriptionId: done.subscriptionId! };
    };
    const payer = await start('payer@example.com', 'tok_visa');
    // Paid at the checkout, declined off-session at the renewal.
    const late = await start('late@example.com', 'tok_chargeCustomerFail');
    expect((await v1(owner.token, 'POST', `/organizations/${shop}/clock/advance`, { by: '+32d' })).status).toBe(200);
    await expect.poll(async () => (await sdk.subscriptions.get({ id: late.subscriptionId })).status).toBe('past_due');

    const paid = await systemEventsOf(payer.customerId);
    const grant = { benefit_id: benefit.id, benefit_grant_id: expect.any(String), benefit_type: 'custom' };
    expect(named(paid, 'benefit.granted').map((e) => e.metadata)).toEqual([grant]);
    expect(named(paid, 'benefit.cycled').map((e) => e.metadata)).toEqual([grant]);
    expect(named(paid, 'subscription.cycled')).toHaveLength(1);
    expect(named(paid, 'order.paid')).toHaveLength(2);
    expect(named(paid, 'subscription.past_due')).toHaveLength(0);

    const dunned = await systemEventsOf(late.customerId);
    const pastDue = named(dunned, 'subscription.past_due');
    expect(pastDue).toHaveLength(1);
    const subscription = await sdk.subscriptions.get({ id: late.subscriptionId });
    expect(pastDue[0]!.metadata).toEqual({
      subscription_id: late.subscriptionId,
      product_id: product.id,
      amount: 700,
      currency: 'usd',
      recurring_interval: 'month',
      recurring_interval_count: 1,
      past_due_at: subscription.pastDueAt!.toISOString(),
    });
    // Only the checkout's payment went through.
    expect(named(dunned, 'order.paid')).toHaveLength(1);
    await sdkEventsOf(late.customerId);
    await sdkEventsOf(payer.customerId);
  });

  it('records customer.updated with the fields that changed, and customer.deleted', async () => {
    const customer = await sdk.customers.create({ organizationId, email: 'changing@example.com', name: 'Old Name', externalId: 'chg-1' });
    await sdk.customers.update({ id: customer.id, customerUpdate: { name: 'New Name', metadata: { tier: 'gold' } } });
    await sdk.customers.delete({ id: customer.id });
    const events = await systemEventsOf(customer.id);
    expect(names(events)).toEqual(['customer.created', 'customer.updated', 'customer.deleted']);
    expect(events[1]!.metadata).toEqual({
      customer_id: customer.id,
      customer_email: 'changing@example.com',
      customer_name: 'New Name',
      customer_external_id: 'chg-1',
      updated_fields: { name: 'New Name', metadata: { tier: 'gold' } },
    });
    // Deleted, the customer's external id is free again but still named (Polar's saved_external_id).
    expect(events[2]!.metadata).toEqual({ customer_id: customer.id, customer_email: 'changing@example.com', customer_name: 'New Name', customer_external_id: 'chg-1' });
    const viaSdk = await sdkEventsOf(customer.id);
    expect(viaSdk.find((e) => e.name === 'customer.updated')).toMatchObject({ metadata: { updatedFields: { name: 'New Name', metadata: { tier: 'gold' } } } });
  });

  it('carries the anonymized email, names and no address in the customer events of a customer deleted with anonymize', async () => {
    const customer = await sdk.customers.create({ organizationId, email: 'private@example.com', name: 'Pat Private' });
    await sdk.customers.update({ id: customer.id, customerUpdate: { email: 'private2@example.com', billingAddress: { country: 'NL', line1: 'Keizersgracht 1', city: 'Amsterdam', postalCode: '1015' } } });
    await sdk.customers.delete({ id: customer.id, anonymize: true });
    const events = await systemEventsOf(customer.id);
    expect(names(events)).toEqual(['customer.created', 'customer.updated', 'customer.deleted']);
    const text = JSON.stringify(events.map((e) => e.metadata));
    for (const secret of ['private@example.com', 'private2@example.com', 'Pat Private', 'Keizersgracht']) expect(text).not.toContain(secret);
    const anonymized = events[2]!.metadata;
    expect(anonymized.customer_email).toMatch(/@anonymized\.invalid$/);
    for (const event of events) expect(event.metadata).toMatchObject({ customer_email: anonymized.customer_email, customer_name: anonymized.customer_name });
    expect(events[1]!.metadata.updated_fields).toEqual({ email: anonymized.customer_email, billing_address: null });
    await sdkEventsOf(customer.id);
  });

  it('filters by source and name, and lists system names and event types with Polar labels', async () => {
    const customer = await sdk.customers.create({ organizationId, email: 'mixed@example.com' });
    await sdk.events.ingest({ events: [{ name: 'api_call', customerId: customer.id, organizationId }] });
    const user = await json<{ items: WireEvent[] }>('GET', `/events/?customer_id=${customer.id}&source=user`);
    expect(names(user.items)).toEqual(['api_call']);
    const all = await json<{ items: WireEvent[] }>('GET', `/events/?customer_id=${customer.id}`);
    expect(names(all.items).sort()).toEqual(['api_call', 'customer.created']);
    const byName = await sdk.events.list({ organizationId, name: 'customer.created', limit: 100 });
    const created = 'pagination' in byName ? byName.items : [];
    expect(created.length).toBeGreaterThanOrEqual(4);
    expect(created.every((e) => e.name === 'customer.created' && e.source === 'system')).toBe(true);

    const eventNames = await sdk.events.listNames({ organizationId, source: 'system', limit: 100 });
    const labelled = Object.fromEntries(eventNames.result.items.map((n) => [n.name, n.label]));
    expect(labelled).toMatchObject({ 'order.paid': 'Order Paid', 'customer.created': 'Customer Created', 'subscription.created': 'Subscription Created' });
    expect(eventNames.result.items.every((n) => n.source === 'system')).toBe(true);
    const types = await sdk.eventTypes.list({ organizationId, source: 'system', limit: 100 });
    const orderPaid = types.result.items.find((t) => t.name === 'order.paid');
    const paid = await json<{ pagination: { total_count: number } }>('GET', `/events/?organization_id=${organizationId}&name=order.paid&limit=1`);
    expect(paid.pagination.total_count).toBeGreaterThanOrEqual(3);
    expect(orderPaid).toMatchObject({ id: null, label: 'Order Paid', source: 'system', occurrences: paid.pagination.total_count });
    // A query finds a system name by Polar's label too, as Polar's does.
    const byLabel = await sdk.eventTypes.list({ organizationId, query: 'order paid', limit: 100 });
    expect(byLabel.result.items.map((t) => t.name)).toEqual(['order.paid']);
  });

  it('keeps lifecycle events out of meters: a meter matching every event counts the user events alone', async () => {
    const meter = await sdk.meters.create({ organizationId, name: 'Everything', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    const customer = await sdk.customers.create({ organizationId, email: 'metered@example.com' });
    const at = new Date();
    await sdk.events.ingest({ events: [{ name: 'api_call', customerId: customer.id, timestamp: at, organizationId }] });
    const quantities = await sdk.meters.quantities({
      id: meter.id,
      startTimestamp: new Date(at.getTime() - 86_400_000),
      endTimestamp: new Date(at.getTime() + 60_000),
      interval: 'day',
      customerId: customer.id,
    });
    expect(quantities.total).toBe(1);
    const counted = await json<{ items: WireEvent[] }>('GET', `/events/?meter_id=${meter.id}&customer_id=${customer.id}`);
    expect(names(counted.items)).toEqual(['api_call']);
  });
});
