import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

// Benefits granted the way a customer gets them: a real sandbox checkout, a refund that revokes, renewals that cycle.

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const sdk = () => polarSdk(daemon.url, owner.token);
const v1 = (method: string, path: string, body?: unknown) => v1Request(daemon.url, owner.token, method, path, body);

/** A product with a license-keys and a custom benefit, bought through the hosted checkout's client calls. */
async function buy(product: { recurringInterval?: 'month' }, email: string) {
  const keys = await sdk().benefits.create({ organizationId, type: 'license_keys', description: 'App licence', properties: { prefix: 'shop', activations: { limit: 1, enableCustomerAdmin: false } } });
  const support = await sdk().benefits.create({ organizationId, type: 'custom', description: 'Priority support', properties: { note: 'Mail vip@shop.test' } });
  const created = await sdk().products.create({ organizationId, name: `Pro ${email}`, ...product, prices: [{ amountType: 'fixed', priceAmount: 2500 }] } as never);
  await sdk().products.updateBenefits({ id: created.id, productBenefitsUpdate: { benefits: [keys.id, support.id] } });
  const checkout = await sdk().checkouts.create({ products: [created.id], customerEmail: email });
  await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
  const done = await sdk().checkouts.get({ id: checkout.id });
  expect(done.status).toBe('succeeded');
  return { customerId: done.customerId!, checkoutId: checkout.id, licenseBenefitId: keys.id };
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Cleo Checkout' });
  organizationId = await createOrganization(owner, 'Checkout Shop');
});
afterAll(async () => {
  await daemon?.close();
});

describe('benefits through a sandbox checkout', () => {
  it('grants a one-time purchase its benefits, and a refund with revoke_benefits takes them back', async () => {
    const { customerId, checkoutId, licenseBenefitId } = await buy({}, 'once@example.test');
    const order = await daemon.db('orders').where({ checkout_id: checkoutId }).first();
    const grants = (await sdk().benefitGrants.list({ customerId })).result.items;
    expect(grants.map((g) => [g.benefit.type, g.isGranted, g.orderId, g.subscriptionId]).sort()).toEqual([
      ['custom', true, order.id, null],
      ['license_keys', true, order.id, null],
    ]);
    const [key] = (await sdk().licenseKeys.list({ benefitId: licenseBenefitId })).result.items;
    expect(key).toMatchObject({ customerId, status: 'granted' });
    expect(key!.key).toMatch(/^SHOP-/);
    expect(await sdk().licenseKeys.validate({ key: key!.key, organizationId })).toMatchObject({ id: key!.id });
    expect((await sdk().customers.getState({ id: customerId })).grantedBenefits).toHaveLength(2);

    await sdk().refunds.create({ orderId: order.id, amount: Number(order.net_amount), reason: 'customer_request', revokeBenefits: true });
    expect((await sdk().benefitGrants.list({ customerId, isGranted: true })).result.items).toEqual([]);
    expect(await sdk().licenseKeys.get({ id: key!.id })).toMatchObject({ status: 'revoked' });
    expect((await v1('POST', '/license-keys/validate', { key: key!.key, organization_id: organizationId })).status).toBe(404);
    expect((await sdk().customers.getState({ id: customerId })).grantedBenefits).toEqual([]);
  });

  it('grants a subscription its benefits once, cycles them at each renewal, and keeps the same key', async () => {
    const { customerId, licenseBenefitId } = await buy({ recurringInterval: 'month' }, 'monthly@example.test');
    const [subscription] = (await sdk().subscriptions.list({ customerId })).result.items;
    const grants = (await sdk().benefitGrants.list({ customerId })).result.items;
    expect(grants.every((g) => g.subscriptionId === subscription!.id && g.isGranted)).toBe(true);
    const state = await sdk().customers.getState({ id: customerId });
    expect(state.activeSubscriptions.map((s) => s.id)).toEqual([subscription!.id]);
    expect(state.grantedBenefits).toHaveLength(2);

    expect((await v1('PATCH', `/organizations/${organizationId}/clock`, { sandbox: true })).status).toBe(200);
    expect((await v1('POST', `/organizations/${organizationId}/clock/advance`, { by: '+3month' })).status).toBe(200);
    const cycled = (await listEvents(daemon.db, organizationId, { type: 'benefit_grant.cycled' })).filter((e) => (e.payload.data as { customer_id: string }).customer_id === customerId);
    expect(cycled).toHaveLength(6);
    expect((await sdk().benefitGrants.list({ customerId })).result.items).toHaveLength(2);
    expect((await sdk().licenseKeys.list({ benefitId: licenseBenefitId })).result.items).toHaveLength(1);

    await sdk().subscriptions.revoke({ id: subscription!.id });
    expect((await sdk().benefitGrants.list({ customerId, isGranted: true })).result.items).toEqual([]);
    const after = await sdk().customers.getState({ id: customerId });
    expect(after).toMatchObject({ activeSubscriptions: [], grantedBenefits: [] });
  });
});
