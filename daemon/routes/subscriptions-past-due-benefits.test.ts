import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Json } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Dee Dunning' });
});
afterAll(() => daemon?.close());

const call = (method: string, path: string, body?: unknown) => v1Json(daemon.url, owner.token, method, path, body);

/** A sandbox shop (its own clock) selling a monthly plan with one benefit, and a subscriber whose renewals decline. */
async function declinedSubscriber(name: string, graceDays: number) {
  const organizationId = await createOrganization(owner, name);
  await call('PATCH', `/organizations/${organizationId}/clock`, { sandbox: true });
  await call('PATCH', `/organizations/${organizationId}`, { subscription_settings: { benefit_revocation_grace_period: graceDays } });
  const benefit = await call('POST', '/benefits/', { organization_id: organizationId, type: 'custom', description: 'Members area', properties: { note: 'Welcome' } });
  const plan = await call('POST', '/products/', { organization_id: organizationId, name: 'Monthly', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] });
  await call('POST', `/products/${plan.id}/benefits`, { benefits: [benefit.id] });
  const checkout = await call('POST', '/checkouts/', { products: [plan.id], customer_email: `${name.replace(/\W/g, '').toLowerCase()}@example.com` });
  // Pays now, declines every renewal off-session.
  await v1Json(daemon.url, undefined, 'POST', `/checkouts/client/${checkout.client_secret}/confirm`, { confirmation_token_id: 'tok_chargeCustomerFail', customer_billing_address: { country: 'US', state: 'NY' } });
  await expect.poll(async () => (await call('GET', `/checkouts/${checkout.id}`)).status, { timeout: 20_000 }).toBe('succeeded');
  const paid = await call('GET', `/checkouts/${checkout.id}`);
  const isGranted = async () => (await call('GET', `/benefit-grants/?customer_id=${paid.customer_id}`)).items.map((g: { is_granted: boolean }) => g.is_granted);
  expect(await isGranted()).toEqual([true]);
  const advance = async (by: string) => expect((await call('POST', `/organizations/${organizationId}/clock/advance`, { by })).jobs_failed).toBe(0);
  const status = async () => (await call('GET', `/subscriptions/${paid.subscription_id}`)).status;
  return { organizationId, subscriptionId: paid.subscription_id as string, isGranted, advance, status };
}

/** The customer pays the owed renewal from the link mailed to `email`, with a good card (the pay page's form). */
async function payFromMailedLink(email: string) {
  const mailed = async () => {
    for (const mail of await daemon.db('mail_outbox').where({ to_address: email })) {
      const match = /\/pay\/(till_pay_[A-Za-z0-9_-]+)/.exec(String(mail.body));
      if (match) return match[0];
    }
    return undefined;
  };
  await expect.poll(mailed, { timeout: 20_000 }).toBeTruthy();
  const paid = await fetch(`${daemon.url}${await mailed()}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: daemon.url },
    body: new URLSearchParams({ intent: 'pay', card_number: '4242424242424242', card_expiry: '12 / 34', card_cvc: '123' }),
  });
  expect(paid.status).toBeLessThan(400);
}

describe('benefits of a past due subscription, as Polar', () => {
  it('revokes them when the renewal is declined, with no grace period (Polar\'s default), and grants them again once paid', async () => {
    const s = await declinedSubscriber('No Grace', 0);
    await s.advance('+1month');
    await expect.poll(s.status, { timeout: 20_000 }).toBe('past_due');
    await expect.poll(s.isGranted, { timeout: 20_000 }).toEqual([false]);

    await payFromMailedLink('nograce@example.com');
    await expect.poll(s.status, { timeout: 20_000 }).toBe('active');
    await expect.poll(s.isGranted, { timeout: 20_000 }).toEqual([true]);
    const grantEvents = (await daemon.db('webhook_events').where({ organization_id: s.organizationId }).whereIn('type', ['benefit_grant.revoked', 'benefit_grant.updated', 'benefit_grant.cycled']).orderBy('seq')).map((e) => e.type);
    expect(grantEvents).toEqual(['benefit_grant.revoked', 'benefit_grant.updated']);
  });

  it('keeps them for benefit_revocation_grace_period days, then revokes them if still owed', async () => {
    const s = await declinedSubscriber('Three Days Grace', 3);
    await s.advance('+1month');
    await expect.poll(s.status, { timeout: 20_000 }).toBe('past_due');
    expect(await s.isGranted()).toEqual([true]);
    await s.advance('+1d');
    expect(await s.status()).toBe('past_due');
    expect(await s.isGranted()).toEqual([true]);
    await s.advance('+3d');
    await expect.poll(s.isGranted, { timeout: 20_000 }).toEqual([false]);
  });

  it('cycles the benefits of a renewal paid within the grace period even when the subscription holds a grant revoked for another reason', async () => {
    const s = await declinedSubscriber('Grace Cycle', 3);
    // A second benefit, granted and then taken off the product: its grant stays revoked in the subscription's scope.
    const product = (await call('GET', `/products/?organization_id=${s.organizationId}`)).items[0];
    const kept = product.benefits[0].id;
    const extra = await call('POST', '/benefits/', { organization_id: s.organizationId, type: 'custom', description: 'Extra', properties: {} });
    await call('POST', `/products/${product.id}/benefits`, { benefits: [kept, extra.id] });
    await expect.poll(async () => (await s.isGranted()).sort(), { timeout: 20_000 }).toEqual([true, true]);
    await call('POST', `/products/${product.id}/benefits`, { benefits: [kept] });
    await expect.poll(async () => (await s.isGranted()).sort(), { timeout: 20_000 }).toEqual([false, true]);

    await s.advance('+1month');
    await expect.poll(s.status, { timeout: 20_000 }).toBe('past_due');
    await payFromMailedLink('gracecycle@example.com');
    await expect.poll(s.status, { timeout: 20_000 }).toBe('active');
    // The paid renewal gives the kept benefit its new period; the removed one stays revoked.
    const cycled = async () => (await daemon.db('webhook_events').where({ organization_id: s.organizationId, type: 'benefit_grant.cycled' })).length;
    await expect.poll(cycled, { timeout: 20_000 }).toBe(1);
    expect((await s.isGranted()).sort()).toEqual([false, true]);
  });
});
