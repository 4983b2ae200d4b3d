import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Bea Benefit' });
  organizationId = await createOrganization(owner, 'Grant Updates');
});
afterAll(() => daemon?.close());

const call = async (method: string, path: string, body?: unknown) => {
  const res = await v1Request(daemon.url, owner.token, method, path, body);
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return res.json();
};

describe('changing a benefit', () => {
  it('announces each grant in effect again with the benefit as it now is, and leaves revoked grants alone', async () => {
    const benefit = await call('POST', '/benefits/', { organization_id: organizationId, type: 'custom', description: 'Support', properties: { note: 'Email us' } });
    const product = await call('POST', '/products/', { organization_id: organizationId, name: 'Book', prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] });
    await call('POST', `/products/${product.id}/benefits`, { benefits: [benefit.id] });
    const buy = async (email: string) => {
      const checkout = await polarSdk(daemon.url, owner.token).checkouts.create({ products: [product.id], customerEmail: email });
      await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'US', state: 'NY' } } });
      return polarSdk(daemon.url, owner.token).checkouts.get({ id: checkout.id });
    };
    const kept = await buy('kept@example.com');
    const refunded = await buy('refunded@example.com');
    const [order] = (await call('GET', `/orders/?checkout_id=${refunded.id}`)).items;
    await call('POST', '/refunds/', { order_id: order.id, amount: order.net_amount, reason: 'customer_request', revoke_benefits: true });

    await call('PATCH', `/benefits/${benefit.id}`, { type: 'custom', description: 'Priority support', properties: { note: 'Call us' } });

    const updates = await listEvents(daemon.db, organizationId, { type: 'benefit_grant.updated' });
    expect(updates).toHaveLength(1);
    expect(updates[0].payload.data).toMatchObject({ customer_id: kept.customerId, benefit: { id: benefit.id, description: 'Priority support' } });
  });
});
