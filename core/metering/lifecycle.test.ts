import { describe, expect, it } from 'vitest';
import { lifecycleEventsOf } from './lifecycle.js';

// The derivation's edges that the HTTP tests (daemon/routes/system-events.test.ts) do not reach.

const subscription = {
  id: 'sub-1',
  customer_id: 'cus-1',
  customer: { id: 'cus-1', external_id: 'ext-1' },
  product_id: 'prod-1',
  discount_id: 'disc-1',
  amount: 900,
  currency: 'eur',
  recurring_interval: 'year',
  recurring_interval_count: 1,
  status: 'active',
  current_period_start: '2026-01-01T00:00:00.000Z',
};
const before = { product_id: 'prod-1', discount_id: 'disc-1', current_period_start: '2026-01-01T00:00:00.000Z' };

describe('lifecycleEventsOf', () => {
  it('reads a change of discount as subscription.updated with the new discount_id (null when removed)', () => {
    const events = lifecycleEventsOf({ type: 'subscription.updated', data: { ...subscription, discount_id: null }, previous: before });
    expect(events).toEqual([{ name: 'subscription.updated', customerId: 'cus-1', externalCustomerId: 'ext-1', metadata: { subscription_id: 'sub-1', discount_id: null } }]);
  });

  it('reads a renewal as subscription.cycled only, even when the discount ran out with it', () => {
    const renewed = { ...subscription, discount_id: null, current_period_start: '2027-01-01T00:00:00.000Z' };
    expect(lifecycleEventsOf({ type: 'subscription.updated', data: renewed, previous: before }).map((e) => e.name)).toEqual(['subscription.cycled']);
  });

  it('writes nothing for a subscription.updated whose previous state is unknown or unchanged', () => {
    expect(lifecycleEventsOf({ type: 'subscription.updated', data: subscription })).toEqual([]);
    expect(lifecycleEventsOf({ type: 'subscription.updated', data: subscription, previous: before })).toEqual([]);
  });

  it('tells a grant that came into effect from one changed while in effect, and writes nothing for a pending one', () => {
    const grant = { id: 'grant-1', customer_id: 'cus-1', customer: { external_id: null }, benefit_id: 'ben-1', benefit: { type: 'license_keys' }, is_granted: true };
    const metadata = { benefit_id: 'ben-1', benefit_grant_id: 'grant-1', benefit_type: 'license_keys' };
    expect(lifecycleEventsOf({ type: 'benefit_grant.created', data: grant, previous: null })).toMatchObject([{ name: 'benefit.granted', metadata }]);
    expect(lifecycleEventsOf({ type: 'benefit_grant.updated', data: grant, previous: { is_granted: false } })).toMatchObject([{ name: 'benefit.granted' }]);
    expect(lifecycleEventsOf({ type: 'benefit_grant.updated', data: grant, previous: { is_granted: true } })).toMatchObject([{ name: 'benefit.updated', metadata }]);
    expect(lifecycleEventsOf({ type: 'benefit_grant.created', data: { ...grant, is_granted: false }, previous: null })).toEqual([]);
  });

  it("leaves billing_name out of updated_fields when it only followed the name, and names a tax id's value", () => {
    const customer = { id: 'cus-1', email: 'a@example.com', external_id: null, metadata: {}, billing_address: null };
    const [event] = lifecycleEventsOf({
      type: 'customer.updated',
      data: { ...customer, name: 'New', billing_name: 'New', tax_id: ['DE123456789', 'eu_vat'] },
      previous: { ...customer, name: 'Old', billing_name: 'Old', tax_id: null },
    });
    expect(event!.metadata.updated_fields).toEqual({ name: 'New', tax_id: 'DE123456789' });
  });

  it('writes checkout.created for no customer, and nothing for a webhook type Polar has no system event for', () => {
    expect(lifecycleEventsOf({ type: 'checkout.created', data: { id: 'co-1', status: 'open', product_id: null, customer_id: 'cus-1' } })).toEqual([
      { name: 'checkout.created', customerId: null, externalCustomerId: null, metadata: { checkout_id: 'co-1', checkout_status: 'open' } },
    ]);
    for (const type of ['subscription.active', 'order.created', 'order.updated', 'customer.state_changed', 'product.updated', 'checkout.updated']) {
      expect(lifecycleEventsOf({ type, data: subscription })).toEqual([]);
    }
  });
});
