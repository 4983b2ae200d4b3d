import type { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StripeFake } from '../core/payments/stripe/fake.js';
import { signUp, type SignedIn } from './testing/auth-client.js';
import type { TestDaemon } from './testing/daemon.js';
import { eventually, renewNow as renewDaemonNow, startStripeTestbed, type StripeTestbed } from './testing/stripe.js';
import { createOrganization, polarSdk, v1Request } from './testing/v1.js';

/**
 * Off-session renewals and a lost dispute, end to end through the Stripe fake: a Stripe organization (not a
 * sandbox) has no test clock, so a renewal is brought forward by moving the subscription's period end and its
 * renewal job to now in the database; tilld's job runner then renews and charges the card saved at Stripe.
 */
let bed: StripeTestbed;
let fake: StripeFake;
let stripe: Stripe;
let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let sdk: Polar;
let anonymous: Polar;

const token = (paymentMethod: string) => bed.token(paymentMethod);

async function v1<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await v1Request(daemon.url, owner.token, method, path, body);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Subscribes with a card Stripe saves on the customer, and answers the subscription's id. */
async function subscribe(paymentMethod: string, email: string): Promise<string> {
  return (await subscribed(paymentMethod, email)).subscriptionId;
}

async function subscribed(paymentMethod: string, email: string): Promise<{ subscriptionId: string; checkoutId: string }> {
  const product = await sdk.products.create({ organizationId, name: `Monthly ${email}`, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1200 }] } as ProductCreate);
  const checkout = await sdk.checkouts.create({ products: [product.id], customerEmail: email, customerName: 'Renewing Buyer' });
  const confirmed = await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token(paymentMethod), customerBillingAddress: { country: 'US' } } });
  expect(confirmed.status).toBe('confirmed');
  const [first] = await daemon.db('payments').where({ checkout_id: checkout.id });
  // 3-D Secure at the first payment: the customer completes it, Stripe's event settles the checkout.
  if (first.status === 'requires_action') fake.authenticate(String(first.processor_payment_id), 'complete');
  const done = await eventually(async () => {
    const current = await sdk.checkouts.get({ id: checkout.id });
    return current.status === 'succeeded' ? current : undefined;
  }, 'the checkout to succeed');
  return { subscriptionId: done.subscriptionId!, checkoutId: checkout.id };
}

const renewNow = (subscriptionId: string) => renewDaemonNow(daemon, subscriptionId);

const renewalPayments = (subscriptionId: string) => daemon.db('payments').where({ subscription_id: subscriptionId, purpose: 'subscription' }).orderBy('created_at');

beforeAll(async () => {
  bed = await startStripeTestbed({ TILL_JOB_INTERVAL_MS: '200' });
  ({ fake, stripe, daemon } = bed);
  owner = await signUp(daemon.url, { name: 'Rena Renewal' });
  organizationId = await createOrganization(owner, 'Renewing Shop');
  sdk = polarSdk(daemon.url, owner.token);
  anonymous = polarSdk(daemon.url, '');
});

afterAll(() => bed?.close());

describe('off-session renewals through Stripe (the fake), and a lost dispute', () => {
  it('renews by charging the card saved at Stripe off-session: the renewal order is paid, the subscription stays active', async () => {
    const { subscriptionId, checkoutId } = await subscribed('pm_card_visa', 'renews@example.com');
    const first = await daemon.db('payments').where({ checkout_id: checkoutId }).first();
    await renewNow(subscriptionId);
    const [renewal] = await eventually(async () => {
      const rows = await renewalPayments(subscriptionId);
      return rows[0]?.status === 'succeeded' ? rows : undefined;
    }, 'the renewal to be paid');
    expect(renewal).toMatchObject({ processor: 'stripe' });
    expect(Number(renewal.amount)).toBe(1200);
    expect([1, true]).toContain(renewal.off_session);
    const intent = fake.state.paymentIntents.get(String(renewal.processor_payment_id))!;
    expect(intent).toMatchObject({ status: 'succeeded', amount: 1200, metadata: { till_payment_id: renewal.id } });
    // The same Stripe customer and the card saved by the first payment.
    const firstIntent = fake.state.paymentIntents.get(String(first.processor_payment_id))!;
    expect(intent.customer).toBe(firstIntent.customer);
    expect(intent.payment_method).toBe(firstIntent.payment_method);
    expect(await sdk.subscriptions.get({ id: subscriptionId })).toMatchObject({ status: 'active' });
    const orders = await daemon.db('orders').where({ subscription_id: subscriptionId, billing_reason: 'subscription_cycle' });
    expect(orders).toMatchObject([{ status: 'paid' }]);
  });

  it('saves the card of a free trial at Stripe with a SetupIntent, and the renewal after the trial charges it off-session', async () => {
    const product = await sdk.products.create({ organizationId, name: 'Trial monthly', recurringInterval: 'month', trialInterval: 'day', trialIntervalCount: 14, prices: [{ amountType: 'fixed', priceAmount: 1500 }] } as ProductCreate);
    const checkout = await sdk.checkouts.create({ products: [product.id], customerEmail: 'trial@example.com', customerName: 'Trial Buyer' });
    const confirmationToken = await token('pm_card_visa');
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: confirmationToken, customerBillingAddress: { country: 'US' } } });
    const done = await eventually(async () => {
      const current = await sdk.checkouts.get({ id: checkout.id });
      return current.status === 'succeeded' ? current : undefined;
    }, 'the trial checkout to succeed');
    const subscriptionId = done.subscriptionId!;
    expect(await sdk.subscriptions.get({ id: subscriptionId })).toMatchObject({ status: 'trialing' });
    expect(await daemon.db('payments').where({ checkout_id: checkout.id })).toHaveLength(0);
    // Saved as Stripe intends: a SetupIntent confirmed with the token, the PaymentMethod attached to the customer.
    const saved = await daemon.db('payment_methods').where({ customer_id: (await daemon.db('subscriptions').where({ id: subscriptionId }).first()).customer_id }).first();
    expect(String(saved.processor_method_id)).toMatch(/^pm_/);
    const setups = [...fake.state.setupIntents.values()].filter((setup) => setup.payment_method === saved.processor_method_id);
    expect(setups).toMatchObject([{ status: 'succeeded', usage: 'off_session', customer: saved.processor_customer_id }]);
    expect((await stripe.paymentMethods.retrieve(String(saved.processor_method_id))).customer).toBe(saved.processor_customer_id);
    expect((await stripe.confirmationTokens.retrieve(confirmationToken)).setup_intent).toBe(setups[0].id);

    await renewNow(subscriptionId);
    const [renewal] = await eventually(async () => {
      const rows = await renewalPayments(subscriptionId);
      return rows[0]?.status === 'succeeded' || rows[0]?.status === 'failed' ? rows : undefined;
    }, 'the first renewal after the trial to settle');
    expect(renewal).toMatchObject({ status: 'succeeded', processor: 'stripe', processor_method_id: saved.processor_method_id });
    expect([1, true]).toContain(renewal.off_session);
    expect(fake.state.paymentIntents.get(String(renewal.processor_payment_id))).toMatchObject({ status: 'succeeded', amount: 1500, customer: saved.processor_customer_id, payment_method: saved.processor_method_id });
    await eventually(async () => ((await sdk.subscriptions.get({ id: subscriptionId })).status === 'active' ? true : undefined), 'active');
  });

  it('refuses a trial whose card Stripe will not save, changing nothing', async () => {
    const product = await sdk.products.create({ organizationId, name: 'Trial declined', recurringInterval: 'month', trialInterval: 'day', trialIntervalCount: 7, prices: [{ amountType: 'fixed', priceAmount: 900 }] } as ProductCreate);
    const checkout = await sdk.checkouts.create({ products: [product.id], customerEmail: 'trial-declined@example.com' });
    const res = await fetch(`${daemon.url}/v1/checkouts/client/${checkout.clientSecret}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ confirmation_token_id: await token('pm_card_chargeDeclined'), customer_billing_address: { country: 'US' } }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'PaymentError', code: 'CHECKOUT_PAYMENT_DECLINED' });
    expect(await sdk.checkouts.get({ id: checkout.id })).toMatchObject({ status: 'open' });
  });

  it('moves the subscription to past_due when Stripe declines the renewal, with Stripe\'s decline code', async () => {
    // Paid at checkout; since then the customer's card at Stripe is one that declines every charge (Stripe's 0341).
    const subscriptionId = await subscribe('pm_card_visa', 'declines@example.com');
    const saved = await daemon.db('payment_methods').where({ customer_id: (await daemon.db('subscriptions').where({ id: subscriptionId }).first()).customer_id }).first();
    const failing = await stripe.paymentMethods.attach('pm_card_chargeCustomerFail', { customer: String(saved.processor_customer_id) });
    await daemon.db('payment_methods').where({ id: saved.id }).update({ processor_method_id: failing.id, last4: '0341' });
    await renewNow(subscriptionId);
    const [renewal] = await eventually(async () => {
      const rows = await renewalPayments(subscriptionId);
      return rows[0]?.status === 'failed' ? rows : undefined;
    }, 'the renewal to fail');
    expect(renewal).toMatchObject({ processor: 'stripe', decline_code: 'generic_decline' });
    await eventually(async () => ((await sdk.subscriptions.get({ id: subscriptionId })).status === 'past_due' ? true : undefined), 'past_due');
    expect(await daemon.db('orders').where({ subscription_id: subscriptionId, billing_reason: 'subscription_cycle' })).toMatchObject([{ status: 'pending' }]);
    // Dunning goes on: the next try is scheduled.
    expect(await daemon.db('jobs').where({ kind: 'subscription.charge', subject_id: subscriptionId })).toHaveLength(1);
  });

  it('moves the subscription to past_due when the renewal needs the customer\'s authentication (authentication_required)', async () => {
    const subscriptionId = await subscribe('pm_card_authenticationRequired', 'authenticate@example.com');
    await renewNow(subscriptionId);
    const [renewal] = await eventually(async () => {
      const rows = await renewalPayments(subscriptionId);
      return rows[0]?.status === 'failed' ? rows : undefined;
    }, 'the renewal to fail');
    expect(renewal).toMatchObject({ processor: 'stripe', decline_code: 'authentication_required' });
    await eventually(async () => ((await sdk.subscriptions.get({ id: subscriptionId })).status === 'past_due' ? true : undefined), 'past_due');
    expect(await daemon.db('jobs').where({ kind: 'subscription.charge', subject_id: subscriptionId })).toHaveLength(1);
  });

  it('revokes the order\'s benefits when a dispute on a one-time purchase is lost at Stripe', async () => {
    const benefit = await v1<{ id: string }>('POST', '/benefits/', { organization_id: organizationId, type: 'custom', description: 'Disputed perk', properties: { note: 'Thanks!' } });
    const product = await v1<{ id: string }>('POST', '/products/', { organization_id: organizationId, name: 'Disputed Thing', prices: [{ amount_type: 'fixed', price_amount: 4000 }] });
    await v1('POST', `/products/${product.id}/benefits`, { benefits: [benefit.id] });
    const checkout = await sdk.checkouts.create({ products: [product.id], customerEmail: 'disputer@example.com' });
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token('pm_card_createDispute'), customerBillingAddress: { country: 'US' } } });
    const grantOf = async () => (await v1<{ items: { is_granted: boolean; is_revoked: boolean }[] }>('GET', `/benefits/${benefit.id}/grants`)).items[0];
    await eventually(async () => ((await grantOf())?.is_granted ? true : undefined), 'the benefit to be granted');
    const order = await daemon.db('orders').where({ checkout_id: checkout.id }).first();
    const dispute = await eventually(async () => (await sdk.disputes.list({ orderId: String(order.id) })).result.items[0], 'the dispute');
    const payment = await daemon.db('payments').where({ checkout_id: checkout.id }).first();
    const [atStripe] = (await stripe.disputes.list({ payment_intent: String(payment.processor_payment_id) })).data;
    await stripe.disputes.update(atStripe.id, { evidence: { uncategorized_text: 'losing_evidence' } });
    fake.advance();
    await eventually(async () => ((await sdk.disputes.get({ id: dispute.id })).status === 'lost' ? true : undefined), 'the dispute to be lost');
    await eventually(async () => ((await grantOf())?.is_revoked ? true : undefined), 'the benefit to be revoked');
    expect(await grantOf()).toMatchObject({ is_granted: false, is_revoked: true });
  });
});
