import type { Order } from '@polar-sh/sdk/models/components/order.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from './testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from './testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from './testing/v1.js';

// Issue 6: metered prices are billed on each renewal from the period's consumption, and the subscription shows
// its meters. Everything goes through the API: a sandbox checkout, usage events, then the test clock.

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Mia Metered' });
  organizationId = await createOrganization(owner, 'Usage Shop');
});
afterAll(() => daemon?.close());

const call = async (method: string, path: string, body?: unknown) => {
  const res = await v1Request(daemon.url, owner.token, method, path, body);
  expect(res.status, `${method} ${path}: ${res.status}`).toBeLessThan(300);
  return res.json();
};

describe('metered prices on renewal', () => {
  it('bills the base price plus the consumption of the period that ended, capped, and shows it on the subscription', async () => {
    const polar = polarSdk(daemon.url, owner.token);
    await call('PATCH', `/organizations/${organizationId}/clock`, { sandbox: true });
    const meter = await polar.meters.create({
      organizationId,
      name: 'API calls',
      filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api.call' }] },
      aggregation: { func: 'count' },
    });
    const product = await call('POST', '/products/', {
      organization_id: organizationId,
      name: 'Base + usage',
      recurring_interval: 'month',
      prices: [
        { amount_type: 'fixed', price_amount: 1000, price_currency: 'usd' },
        { amount_type: 'metered_unit', meter_id: meter.id, unit_amount: '2.5', cap_amount: 100000, price_currency: 'usd' },
      ],
    });
    const checkout = await polar.checkouts.create({ products: [product.id], customerEmail: 'usage@example.com' });
    await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'DE' } } });
    const { subscriptionId, customerId } = await polar.checkouts.get({ id: checkout.id });
    expect(subscriptionId).toBeTruthy();

    // 40 calls during the first period: 40 × 2.5 cents = 100 cents on top of the base price.
    const events = Array.from({ length: 40 }, (_, i) => ({ name: 'api.call', customer_id: customerId, external_id: `call-${i}` }));
    expect(await call('POST', '/events/ingest', { events })).toEqual({ inserted: 40, duplicates: 0 });

    const before = await call('GET', `/subscriptions/${subscriptionId}`);
    expect(before.meters).toEqual([expect.objectContaining({ meter_id: meter.id, consumed_units: 40, amount: 100 })]);

    const advanced = await call('POST', `/organizations/${organizationId}/clock/advance`, { by: '+1month' });
    expect(advanced.jobs_failed).toBe(0);
    const orders: Order[] = [];
    for await (const page of await polar.orders.list({ subscriptionId: subscriptionId!, limit: 10 })) orders.push(...page.result.items);
    const renewal = orders.find((order) => order.billingReason === 'subscription_cycle');
    expect(renewal).toMatchObject({ status: 'paid', subtotalAmount: 1100 });
    expect(renewal!.items.map((item) => item.amount).sort((a, b) => a - b)).toEqual([100, 1000]);
    expect(renewal!.items.find((item) => item.amount === 100)?.label).toContain('API calls');

    // The new period starts with no consumption.
    const after = await call('GET', `/subscriptions/${subscriptionId}`);
    expect(after.meters).toEqual([expect.objectContaining({ meter_id: meter.id, consumed_units: 0, amount: 0 })]);
  });
});
