import type { Order } from '@polar-sh/sdk/models/components/order.js';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { RFCDate } from '@polar-sh/sdk/types/rfcdate.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../core/webhooks/outbox.js';
import { signUp, type SignedIn } from './testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from './testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from './testing/v1.js';

// Issue 5's "Done means" through @polar-sh/sdk 0.49.0, as a seller's application would do it: every answer is
// validated by the SDK's own models. The test clock (a Till extension, not in the SDK) is driven over HTTP.

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Ola Onboarding' });
  organizationId = await createOrganization(owner, 'SDK Shop');
});
afterAll(() => daemon?.close());

const clock = async (method: string, path: string, body: unknown) => {
  const res = await v1Request(daemon.url, owner.token, method, `/organizations/${organizationId}/clock${path}`, body);
  expect(res.status).toBe(200);
  return res.json();
};

/** Every order of a subscription, following the SDK's pagination. */
async function ordersOf(subscriptionId: string): Promise<Order[]> {
  const orders: Order[] = [];
  for await (const page of await polarSdk(daemon.url, owner.token).orders.list({ subscriptionId, limit: 5 })) orders.push(...page.result.items);
  return orders;
}

describe('a year of commerce through @polar-sh/sdk', () => {
  it('sells a monthly product, refunds half, renews twelve times in a year on the test clock, then cancels', async () => {
    const polar = polarSdk(daemon.url, owner.token);
    const customerSide = polarSdk(daemon.url, '');
    await clock('PATCH', '', { sandbox: true });

    const product = await polar.products.create({ organizationId, name: 'SDK Pro', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1500 }] } as ProductCreate);
    const checkout = await polar.checkouts.create({ products: [product.id], customerEmail: 'sdk@example.com' });
    const confirmed = await customerSide.checkouts.clientConfirm({
      clientSecret: checkout.clientSecret,
      checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'DE' } },
    });
    expect(confirmed.status).toBe('confirmed');
    const { status, subscriptionId } = await polar.checkouts.get({ id: checkout.id });
    expect(status).toBe('succeeded');
    expect(subscriptionId).toBeTruthy();

    const [first] = await ordersOf(subscriptionId!);
    expect(first).toMatchObject({ status: 'paid', billingReason: 'subscription_create', totalAmount: 1500, checkoutId: checkout.id });
    const refund = await polar.refunds.create({ orderId: first.id, amount: first.netAmount / 2, reason: 'customer_request' });
    expect(refund).toMatchObject({ amount: 750, status: 'succeeded', orderId: first.id });
    expect(await polar.orders.get({ id: first.id })).toMatchObject({ status: 'partially_refunded', refundedAmount: 750 });

    const advanced = await clock('POST', '/advance', { by: '+1year' });
    expect(advanced.jobs_failed).toBe(0);
    const renewals = (await ordersOf(subscriptionId!)).filter((order) => order.billingReason === 'subscription_cycle');
    expect(renewals).toHaveLength(12);
    for (const order of renewals) expect(order).toMatchObject({ status: 'paid', paid: true, totalAmount: 1500, subscriptionId });
    // Twelve renewals, a month apart on the organization's clock.
    const times = renewals.map((order) => order.createdAt.getTime()).sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) {
      const gap = Math.round((times[i]! - times[i - 1]!) / 86_400_000);
      expect(gap).toBeGreaterThanOrEqual(28);
      expect(gap).toBeLessThanOrEqual(31);
    }

    const subscription = await polar.subscriptions.get({ id: subscriptionId! });
    expect(subscription).toMatchObject({ status: 'active', cancelAtPeriodEnd: false });
    const canceled = await polar.subscriptions.update({ id: subscriptionId!, subscriptionUpdate: { cancelAtPeriodEnd: true, customerCancellationReason: 'unused' } });
    expect(canceled).toMatchObject({ cancelAtPeriodEnd: true, endsAt: subscription.currentPeriodEnd });
    await clock('POST', '/advance', { by: '+1month' });
    const ended = await polar.subscriptions.get({ id: subscriptionId! });
    expect(ended).toMatchObject({ status: 'canceled', endedAt: subscription.currentPeriodEnd });

    const types = (await listEvents(daemon.db, organizationId)).map((event) => event.payload.type);
    expect(types.filter((type) => type === 'order.paid')).toHaveLength(13);
    expect(types.filter((type) => type === 'subscription.revoked')).toHaveLength(1);
    expect(types).toContain('refund.created');

    // The same year through metrics.get (validated by the SDK): thirteen orders of 1500, 750 of them refunded.
    const start = new RFCDate(first.createdAt);
    const metrics = await polar.metrics.get({ startDate: start, endDate: new RFCDate(ended.endedAt!), interval: 'month', metrics: ['orders', 'revenue', 'net_revenue', 'churned_subscriptions'] });
    expect(metrics.totals).toMatchObject({ orders: 13, revenue: 13 * 1500, netRevenue: 13 * 1500 - 750, churnedSubscriptions: 1 });
    expect((await polar.metrics.limits()).intervals.month).toEqual({ minDays: 60, maxDays: 365 * 4 });
  });
});
