import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from './testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from './testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from './testing/v1.js';

// Deleting a customer ends what they have, as Polar does: subscriptions end now, grants are revoked, and the
// last customer.state_changed shows nothing active.

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Dora Delete' });
  organizationId = await createOrganization(owner, 'Deleting Shop');
});
afterAll(() => daemon?.close());

const call = async (method: string, path: string, body?: unknown) => {
  const res = await v1Request(daemon.url, owner.token, method, path, body);
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return res.status === 204 ? undefined : res.json();
};

describe('deleting a customer', () => {
  it('ends their subscription, revokes their grants and announces an empty state', async () => {
    const polar = polarSdk(daemon.url, owner.token);
    const benefit = await call('POST', '/benefits/', { organization_id: organizationId, type: 'license_keys', description: 'A key', properties: { prefix: 'DEL' } });
    const product = await call('POST', '/products/', { organization_id: organizationId, name: 'Yearly key', recurring_interval: 'year', prices: [{ amount_type: 'fixed', price_amount: 5000, price_currency: 'usd' }] });
    await call('POST', `/products/${product.id}/benefits`, { benefits: [benefit.id] });
    const checkout = await polar.checkouts.create({ products: [product.id], customerEmail: 'leaving@example.com' });
    await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
    const { subscriptionId, customerId } = await polar.checkouts.get({ id: checkout.id });
    const state = await call('GET', `/customers/${customerId}/state`);
    expect(state.active_subscriptions).toHaveLength(1);
    expect(state.granted_benefits).toHaveLength(1);

    await call('DELETE', `/customers/${customerId}`);

    const subscription = await call('GET', `/subscriptions/${subscriptionId}`);
    expect(subscription.status).toBe('canceled');
    expect(subscription.ended_at).not.toBeNull();
    const grant = await daemon.db('benefit_grants').where({ customer_id: customerId }).first();
    expect(grant.revoked_at).not.toBeNull();
    const keys = await call('GET', `/license-keys/?organization_id=${organizationId}`);
    expect(keys.items.map((key: { status: string }) => key.status)).toEqual(['revoked']);

    const events = (await daemon.db('webhook_events').where({ organization_id: organizationId, type: 'customer.state_changed' }).orderBy('seq')).map((row) => row.payload);
    const last = typeof events.at(-1) === 'string' ? JSON.parse(events.at(-1)) : events.at(-1);
    expect(last.data).toMatchObject({ id: customerId, active_subscriptions: [], granted_benefits: [] });
  });
});
