import type { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { PaymentError } from '@polar-sh/sdk/models/errors/paymenterror.js';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from './testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from './testing/daemon.js';
import { createOrganization, polarSdk } from './testing/v1.js';

/*
 * Issue 16: the Stripe scenarios against Stripe's own test mode, when STRIPE_TEST_API_KEY (an sk_test_… key) is set.
 * tilld talks to api.stripe.com with that key; everything is checked through Till's API and Stripe's, never through
 * a fake's state. Stripe cannot deliver webhooks to a tilld on loopback, so only the scenarios that settle from
 * Stripe's synchronous answers run here (pay, decline, the card saved for later, refunds in part and in full); the
 * ones that wait for a webhook (3-D Secure, processing, disputes, late refund failures) run against the fake only
 * (daemon/stripe.test.ts). Not set: the whole file is skipped, and says so.
 */
const key = process.env.STRIPE_TEST_API_KEY;

describe.skipIf(!key)(`payments through Stripe's test mode (STRIPE_TEST_API_KEY ${key ? 'set' : 'not set: skipped'})`, () => {
  let stripe: Stripe;
  let daemon: TestDaemon;
  let owner: SignedIn;
  let organizationId: string;
  let sdk: Polar;
  let anonymous: Polar;

  const token = async (paymentMethod: string) => (await stripe.testHelpers.confirmationTokens.create({ payment_method: paymentMethod })).id;

  async function openCheckout(amount: number, email: string) {
    const product = await sdk.products.create({ organizationId, name: `Test-mode item ${amount}`, prices: [{ amountType: 'fixed', priceAmount: amount }] } as ProductCreate);
    return sdk.checkouts.create({ products: [product.id], customerEmail: email, customerName: 'Test Buyer' });
  }

  beforeAll(async () => {
    if (!key!.startsWith('sk_test_')) throw new Error('STRIPE_TEST_API_KEY must be a test-mode secret key (sk_test_…): this suite moves money');
    stripe = new Stripe(key!);
    daemon = await startTestDaemon({
      TILL_STRIPE_SECRET_KEY: key!,
      TILL_STRIPE_PUBLISHABLE_KEY: 'pk_test_unused_by_these_scenarios',
      // No webhook reaches a tilld on loopback; a secret is still required by the configuration.
      TILL_STRIPE_WEBHOOK_SECRET: 'whsec_unused_by_these_scenarios',
      TILL_SANDBOX_ONLY: '0',
    });
    owner = await signUp(daemon.url, { name: 'Test Mode' });
    organizationId = await createOrganization(owner, 'Test Mode Shop');
    sdk = polarSdk(daemon.url, owner.token);
    anonymous = polarSdk(daemon.url, '');
  }, 120_000);

  afterAll(async () => {
    await daemon?.close();
  });

  it('pays with a ConfirmationToken, records Stripe\'s intent and saves the card on a Stripe customer', { timeout: 60_000 }, async () => {
    const checkout = await openCheckout(2500, 'testmode-paid@example.com');
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token('pm_card_visa'), customerBillingAddress: { country: 'US' } } });
    expect((await sdk.checkouts.get({ id: checkout.id })).status).toBe('succeeded');
    const payments = (await sdk.payments.list({ checkoutId: checkout.id })).result.items;
    expect(payments).toMatchObject([{ processor: 'stripe', status: 'succeeded', amount: 2500 }]);
    const [payment] = await daemon.db('payments').where({ checkout_id: checkout.id });
    const intent = await stripe.paymentIntents.retrieve(String(payment.processor_payment_id));
    expect(intent).toMatchObject({ status: 'succeeded', amount: 2500, currency: 'usd', setup_future_usage: 'off_session' });
    expect(intent.customer).toBeTruthy();
  });

  it('refuses a declined card with Stripe\'s decline code and keeps the checkout open', { timeout: 60_000 }, async () => {
    const checkout = await openCheckout(1800, 'testmode-declined@example.com');
    const declined = anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token('pm_card_chargeDeclinedInsufficientFunds'), customerBillingAddress: { country: 'US' } } });
    await expect(declined).rejects.toBeInstanceOf(PaymentError);
    expect((await sdk.checkouts.get({ id: checkout.id })).status).toBe('open');
  });

  it('refunds in part, then in full', { timeout: 60_000 }, async () => {
    const checkout = await openCheckout(2000, 'testmode-refund@example.com');
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token('pm_card_visa'), customerBillingAddress: { country: 'US' } } });
    const order = (await sdk.orders.list({ checkoutId: checkout.id })).result.items[0]!;
    expect(await sdk.refunds.create({ orderId: order.id, amount: 500, reason: 'customer_request' })).toMatchObject({ amount: 500 });
    expect(await sdk.refunds.create({ orderId: order.id, amount: 1500, reason: 'customer_request' })).toMatchObject({ amount: 1500 });
    const [payment] = await daemon.db('payments').where({ checkout_id: checkout.id });
    const refunds = await stripe.refunds.list({ payment_intent: String(payment.processor_payment_id) });
    expect(refunds.data.map((refund) => refund.amount).sort((a, b) => a - b)).toEqual([500, 1500]);
    expect(await sdk.orders.get({ id: order.id })).toMatchObject({ refundedAmount: 2000 });
  });
});
