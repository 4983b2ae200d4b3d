import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSubscription } from '../billing/subscriptions/service.js';
import { grantBenefits } from '../billing/benefit-grants/service.js';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { createOrganization, polarSdk } from '../../daemon/testing/v1.js';
import { signUp, type SignedIn } from '../../daemon/testing/auth-client.js';
import { meteredAmount, meteredLineItems, meteredLineLabel, subscriptionMeters } from './billing.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Bill Meter' });
  organizationId = await createOrganization(owner, 'Metered Billing');
});
afterAll(async () => {
  await daemon?.close();
});

describe('meteredAmount', () => {
  it('multiplies on the decimal digits and rounds half up to a whole minor unit', () => {
    expect(meteredAmount('0.1', 3, null)).toBe(0);
    expect(meteredAmount('0.5', 3, null)).toBe(2);
    expect(meteredAmount('12.5', 4, null)).toBe(50);
    expect(meteredAmount('0.000001', 1_000_000, null)).toBe(1);
  });

  it('applies the cap', () => {
    expect(meteredAmount('100', 50, 1000)).toBe(1000);
    expect(meteredAmount('100', 5, 1000)).toBe(500);
  });
});

describe('meteredLineLabel', () => {
  it('writes the count of units in agreement with its noun: 1 unit, 0 units, 2 units, 1.50 units', () => {
    expect(meteredLineLabel('API calls', 1, 0)).toBe('API calls: 1 unit');
    expect(meteredLineLabel('API calls', 0, 0)).toBe('API calls: 0 units');
    expect(meteredLineLabel('API calls', 2, 0)).toBe('API calls: 2 units');
    expect(meteredLineLabel('Storage GB', 1.5, 0)).toBe('Storage GB: 1.50 units');
    expect(meteredLineLabel('API calls', 1, 5)).toBe('API calls: 1 unit (1 credited)');
    expect(meteredLineLabel('API calls', 12, 5)).toBe('API calls: 12 units (5 credited)');
  });
});

describe('metered prices billed on renewal', () => {
  it("bills the period's consumption per metered price, credits first, cap applied", async () => {
    const polar = polarSdk(daemon.url, owner.token);
    const customer = await polar.customers.create({ organizationId, email: 'usage@example.com' });
    const calls = await polar.meters.create({ organizationId, name: 'API calls', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'call' }] }, aggregation: { func: 'count' } });
    const gb = await polar.meters.create({ organizationId, name: 'Storage GB', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'store' }] }, aggregation: { func: 'sum', property: 'gb' } });
    const credit = await polar.benefits.create({ organizationId, type: 'meter_credit', description: '5 free calls', properties: { units: 5, rollover: false, meterId: calls.id } } as never);
    const product = await polar.products.create({
      organizationId,
      name: 'Pay as you go',
      recurringInterval: 'month',
      prices: [
        { amountType: 'metered_unit', meterId: calls.id, unitAmount: '2.5', priceCurrency: 'usd' },
        { amountType: 'metered_unit', meterId: gb.id, unitAmount: '100', capAmount: 1500, priceCurrency: 'usd' },
      ],
    });
    await polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [credit.id] } });
    const priceIds = product.prices.map((price) => price.id);

    const clock = { now: () => new Date() };
    const subscription = await daemon.db.transaction(async (trx) => {
      const created = await createSubscription(trx, clock, {
        organizationId, customerId: customer.id, productId: product.id, priceIds, amount: 0, currency: 'usd', recurringInterval: 'month', recurringIntervalCount: 1,
        discountId: null, checkoutId: null, paymentMethodId: null, trialEnd: null, metadata: {}, customFieldData: {},
      });
      await grantBenefits(trx, clock, { organizationId, customerId: customer.id, productId: product.id, orderId: null, subscriptionId: created.id });
      return created;
    });
    const inPeriod = subscription.currentPeriodStart;
    const before = new Date(subscription.currentPeriodStart.getTime() - 86_400_000);
    await polar.events.ingest({
      events: [
        ...Array.from({ length: 12 }, () => ({ name: 'call', customerId: customer.id, timestamp: inPeriod })),
        { name: 'call', customerId: customer.id, timestamp: before },
        { name: 'store', customerId: customer.id, timestamp: inPeriod, metadata: { gb: 30 } },
      ],
    });

    const period = { subscriptionId: subscription.id, periodStart: subscription.currentPeriodStart, periodEnd: new Date(Date.now() + 1000) };
    const items = await meteredLineItems(daemon.db, period);
    expect(items).toEqual([
      // 12 calls in the period (not the one before it), 5 credited: 7 × 2.5 = 17.5 → 18.
      { label: 'API calls: 12 units (5 credited)', amount: 18, taxAmount: 0, proration: false, productPriceId: priceIds[0] },
      // 30 GB × 100 = 3000, capped at 1500.
      { label: 'Storage GB: 30 units', amount: 1500, taxAmount: 0, proration: false, productPriceId: priceIds[1] },
    ]);
    const meters = await subscriptionMeters(daemon.db, period);
    expect(meters.map((m) => [m.meter_id, m.consumed_units, m.credited_units, m.amount])).toEqual([
      [calls.id, 12, 5, 18],
      [gb.id, 30, 0, 1500],
    ]);
    expect((await subscriptionMeters(daemon.db, period))[0]!.id).toBe(meters[0]!.id);
  });
});
