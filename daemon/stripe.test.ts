import type { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { PaymentError } from '@polar-sh/sdk/models/errors/paymenterror.js';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StripeFake } from '../core/payments/stripe/fake.js';
import { signUp, type SignedIn } from './testing/auth-client.js';
import type { TestDaemon } from './testing/daemon.js';
import { eventually, startStripeTestbed, type StripeTestbed } from './testing/stripe.js';
import { createOrganization, polarSdk, v1Request } from './testing/v1.js';

let bed: StripeTestbed;
let fake: StripeFake;
let stripe: Stripe;
let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let sandboxOrganizationId: string;
let sdk: Polar;
let anonymous: Polar;

const token = (paymentMethod: string) => bed.token(paymentMethod);
const paymentsOf = (checkoutId: string) => daemon.db('payments').where({ checkout_id: checkoutId }).orderBy('created_at');
const checkoutStatus = async (id: string) => (await sdk.checkouts.get({ id })).status;

async function openCheckout(amount: number, email: string) {
  const product = await sdk.products.create({ organizationId, name: `Item ${amount}`, prices: [{ amountType: 'fixed', priceAmount: amount }] } as ProductCreate);
  return sdk.checkouts.create({ products: [product.id], customerEmail: email, customerName: 'Buyer' });
}

async function paidOrder(paymentMethod: string, amount = 2000) {
  const checkout = await openCheckout(amount, 'paid@example.com');
  await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token(paymentMethod), customerBillingAddress: { country: 'US' } } });
  const order = await daemon.db('orders').where({ checkout_id: checkout.id }).first();
  const [payment] = await paymentsOf(checkout.id);
  return { checkout, orderId: String(order.id), intentId: String(payment.processor_payment_id) };
}

beforeAll(async () => {
  bed = await startStripeTestbed();
  ({ fake, stripe, daemon } = bed);
  owner = await signUp(daemon.url, { name: 'Stella Stripe' });
  organizationId = await createOrganization(owner, 'Live Shop');
  sandboxOrganizationId = await createOrganization(owner, 'Sandbox Shop');
  expect((await v1Request(daemon.url, owner.token, 'PATCH', `/organizations/${sandboxOrganizationId}/clock`, { sandbox: true })).status).toBe(200);
  sdk = polarSdk(daemon.url, owner.token);
  anonymous = polarSdk(daemon.url, '');
});

afterAll(() => bed?.close());

describe('payments through Stripe (the in-process fake, driven by the stripe package)', () => {
  // Against Stripe's own test mode (STRIPE_TEST_API_KEY): daemon/stripe-testmode.test.ts.
  it('pays with a ConfirmationToken: the intent is Stripe\'s, the order is paid, and the card is saved at Stripe', async () => {
    const checkout = await openCheckout(2500, 'ada@example.com');
    const confirmed = await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token('pm_card_visa'), customerBillingAddress: { country: 'US' } } });
    expect(confirmed.status).toBe('confirmed');
    expect(await checkoutStatus(checkout.id)).toBe('succeeded');
    const [payment] = await paymentsOf(checkout.id);
    expect(payment).toMatchObject({ processor: 'stripe', status: 'succeeded', method_brand: 'visa', method_last4: '4242' });
    const intent = fake.state.paymentIntents.get(String(payment.processor_payment_id))!;
    expect(intent).toMatchObject({ amount: 2500, currency: 'usd', status: 'succeeded', metadata: { till_payment_id: payment.id }, setup_future_usage: 'off_session' });
    expect(fake.state.customers.get(String(intent.customer))?.email).toBe('ada@example.com');
    expect(fake.state.paymentMethods.get(String(intent.payment_method))?.customer).toBe(intent.customer);
    expect(await daemon.db('orders').where({ checkout_id: checkout.id, status: 'paid' })).toHaveLength(1);
  });

  it('answers a decline with Stripe\'s decline code and keeps the checkout open', async () => {
    const checkout = await openCheckout(1800, 'declined@example.com');
    const declined = anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token('pm_card_chargeDeclinedInsufficientFunds'), customerBillingAddress: { country: 'US' } } });
    await expect(declined).rejects.toBeInstanceOf(PaymentError);
    expect(await checkoutStatus(checkout.id)).toBe('open');
    expect(await paymentsOf(checkout.id)).toMatchObject([{ processor: 'stripe', status: 'failed', decline_code: 'insufficient_funds' }]);
  });

  it('refuses card numbers and the sandbox\'s test tokens for a live organization, while a sandbox organization keeps the sandbox', async () => {
    const checkout = await openCheckout(900, 'tok@example.com');
    const refused = await v1Request(daemon.url, undefined, 'POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { confirmation_token_id: 'tok_visa', customer_billing_address: { country: 'US' } });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(await refused.json())).toContain('confirmation_token_id');
    const item = await sdk.products.create({ organizationId: sandboxOrganizationId, name: 'Sandboxed', prices: [{ amountType: 'fixed', priceAmount: 700 }] } as ProductCreate);
    const sandboxed = await sdk.checkouts.create({ products: [item.id], customerEmail: 'sandbox@example.com' });
    await anonymous.checkouts.clientConfirm({ clientSecret: sandboxed.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'US' } } });
    expect(await paymentsOf(sandboxed.id)).toMatchObject([{ processor: 'sandbox', status: 'succeeded' }]);
  });

  it('waits for 3-D Secure, and settles from Stripe\'s webhook when the customer completes it', async () => {
    const checkout = await openCheckout(3100, 'secure@example.com');
    const confirmed = await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token('pm_card_threeDSecure2Required'), customerBillingAddress: { country: 'US' } } });
    expect(confirmed.status).toBe('confirmed');
    const [waiting] = await paymentsOf(checkout.id);
    expect(waiting).toMatchObject({ status: 'requires_action', redirect_url: expect.stringContaining('/_fake/3ds/') });
    fake.authenticate(String(waiting.processor_payment_id), 'complete');
    await eventually(async () => ((await checkoutStatus(checkout.id)) === 'succeeded' ? true : undefined), 'the checkout to succeed');
    expect(await paymentsOf(checkout.id)).toMatchObject([{ status: 'succeeded' }]);
  });

  it('reopens the checkout when the customer fails 3-D Secure', async () => {
    const checkout = await openCheckout(3200, 'abandon@example.com');
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token('pm_card_threeDSecure2Required'), customerBillingAddress: { country: 'US' } } });
    const [waiting] = await paymentsOf(checkout.id);
    fake.authenticate(String(waiting.processor_payment_id), 'fail');
    await eventually(async () => ((await checkoutStatus(checkout.id)) === 'open' ? true : undefined), 'the checkout to reopen');
    expect(await paymentsOf(checkout.id)).toMatchObject([{ status: 'failed', decline_code: 'payment_intent_authentication_failure' }]);
  });

  it('keeps a bank debit processing, then fails it from Stripe\'s webhook', async () => {
    const checkout = await openCheckout(4000, 'sepa@example.com');
    const sepa = await stripe.testHelpers.confirmationTokens.create({ payment_method_data: { type: 'sepa_debit', sepa_debit: { iban: 'AT861904300235473202' } } });
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: sepa.id, customerBillingAddress: { country: 'US' } } });
    expect(await paymentsOf(checkout.id)).toMatchObject([{ status: 'processing' }]);
    fake.advance();
    await eventually(async () => ((await paymentsOf(checkout.id))[0].status === 'failed' ? true : undefined), 'the payment to fail');
    expect(await checkoutStatus(checkout.id)).toBe('open');
  });

  it('refunds in part then in full through Stripe', async () => {
    const { orderId, intentId } = await paidOrder('pm_card_visa', 2000);
    expect(await sdk.refunds.create({ orderId, amount: 500, reason: 'customer_request' })).toMatchObject({ status: 'succeeded', amount: 500 });
    expect(await sdk.refunds.create({ orderId, amount: 1500, reason: 'customer_request' })).toMatchObject({ status: 'succeeded' });
    const refunds = [...fake.state.refunds.values()].filter((refund) => refund.payment_intent === intentId);
    expect(refunds.map((refund) => refund.amount).sort()).toEqual([1500, 500]);
    expect(await sdk.orders.get({ id: orderId })).toMatchObject({ status: 'refunded', refundedAmount: 2000 });
  });

  it('gives the amount back to the order when a refund fails late at Stripe', async () => {
    const { orderId } = await paidOrder('pm_card_refundFail', 1200);
    const refund = await sdk.refunds.create({ orderId, amount: 1200, reason: 'customer_request' });
    expect(refund.status).toBe('succeeded');
    fake.advance();
    await eventually(async () => ((await sdk.refunds.list({ orderId })).result.items[0]?.status === 'failed' ? true : undefined), 'the refund to fail');
    expect(await sdk.orders.get({ id: orderId })).toMatchObject({ refundedAmount: 0 });
  });

  it('records a dispute, won with evidence; another lost when accepted through Polar\'s disputes API', async () => {
    const won = await paidOrder('pm_card_createDispute', 5000);
    const opened = await eventually(async () => (await sdk.disputes.list({ orderId: won.orderId })).result.items[0], 'the dispute');
    expect(opened).toMatchObject({ status: 'needs_response', resolved: false, closed: false, amount: 5000, taxAmount: 0, currency: 'usd', orderId: won.orderId, reason: 'fraudulent' });
    expect(await sdk.disputes.get({ id: opened.id })).toMatchObject({ id: opened.id, customer: { email: 'paid@example.com' } });
    const [atStripe] = (await stripe.disputes.list({ payment_intent: won.intentId })).data;
    await stripe.disputes.update(atStripe.id, { evidence: { uncategorized_text: 'winning_evidence' } });
    fake.advance();
    await eventually(async () => ((await sdk.disputes.get({ id: opened.id })).status === 'won' ? true : undefined), 'the dispute to be won');

    const lost = await paidOrder('pm_card_createDispute', 6000);
    const second = await eventually(async () => (await sdk.disputes.list({ orderId: lost.orderId })).result.items[0], 'the second dispute');
    expect(await sdk.disputes.accept({ id: second.id })).toMatchObject({ status: 'lost', resolved: true, closed: true });
    const again = await v1Request(daemon.url, owner.token, 'POST', `/disputes/${second.id}/accept`);
    expect(again.status).toBe(409);
  });

  it('acts once on a duplicated event, and refuses an unsigned or stale one', async () => {
    const { intentId } = await paidOrder('pm_card_visa', 1500);
    const event = await eventually(async () => fake.events.find((item) => item.type === 'payment_intent.succeeded' && (item.data.object as { id: string }).id === intentId), 'the event');
    await fake.webhooksIdle();
    const again = await fake.redeliver(event.id);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toMatchObject({ duplicate: true });
    expect((await fake.redeliver(event.id, { signature: 'missing' })).status).toBe(400);
    expect((await fake.redeliver(event.id, { signature: 'wrong_secret' })).status).toBe(400);
    const stale = await fake.redeliver(event.id, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    expect(stale.status).toBe(400);
    expect(stale.body).toContain('tolerance');
  });

  it('settles from Stripe\'s current state when events arrive in reverse order', async () => {
    const checkout = await openCheckout(2700, 'reorder@example.com');
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token('pm_card_threeDSecure2Required'), customerBillingAddress: { country: 'US' } } });
    const [waiting] = await paymentsOf(checkout.id);
    await fake.webhooksIdle();
    fake.holdWebhooks();
    fake.authenticate(String(waiting.processor_payment_id), 'complete');
    await fake.releaseWebhooks('reversed');
    await eventually(async () => ((await checkoutStatus(checkout.id)) === 'succeeded' ? true : undefined), 'the checkout to succeed');
    expect(await daemon.db('orders').where({ checkout_id: checkout.id })).toHaveLength(1);
  });
});

describe('the customer portal’s cards through Stripe', () => {
  it('adds a card with a SetupIntent on the customer’s Stripe customer (3-D Secure through confirm), and detaches a deleted card at Stripe', async () => {
    const product = await sdk.products.create({ organizationId, name: 'Live Monthly', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1500 }] } as ProductCreate);
    const checkout = await sdk.checkouts.create({ products: [product.id], customerEmail: 'cards@example.com', customerName: 'Card Holder' });
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await token('pm_card_visa'), customerBillingAddress: { country: 'US' } } });
    const { customerId, subscriptionId } = await sdk.checkouts.get({ id: checkout.id });
    const first = await daemon.db('payment_methods').where({ customer_id: customerId }).first();
    const session = { customerSession: (await sdk.customerSessions.create({ customerId: customerId! })).token };
    const returnUrl = `${daemon.url}/portal/back`;

    const added = await anonymous.customerPortal.customers.addPaymentMethod(session, { confirmationTokenId: await token('pm_card_mastercard'), setDefault: true, returnUrl });
    expect(added).toMatchObject({ status: 'succeeded', paymentMethod: { methodMetadata: { brand: 'mastercard', last4: '4444' } } });
    const saved = await daemon.db('payment_methods').where({ id: (added as { paymentMethod: { id: string } }).paymentMethod.id }).first();
    expect(saved).toMatchObject({ processor: 'stripe', processor_customer_id: first.processor_customer_id });
    const setup = [...fake.state.setupIntents.values()].find((intent) => intent.payment_method === saved.processor_method_id)!;
    expect(setup).toMatchObject({ status: 'succeeded', usage: 'off_session', customer: first.processor_customer_id, metadata: { organization_id: organizationId, customer_id: customerId } });
    expect(fake.state.paymentMethods.get(String(saved.processor_method_id))?.customer).toBe(first.processor_customer_id);
    expect((await daemon.db('subscriptions').where({ id: subscriptionId }).first()).payment_method_id).toBe(saved.id);

    // A card whose bank wants 3-D Secure to be saved: requires_action with the SetupIntent's client secret, then confirm.
    const waiting = await anonymous.customerPortal.customers.addPaymentMethod(session, { confirmationTokenId: await token('pm_card_authenticationRequiredOnSetup'), setDefault: false, returnUrl });
    expect(waiting).toMatchObject({ status: 'requires_action', clientSecret: expect.stringMatching(/^seti_/) });
    const setupId = (waiting as { clientSecret: string }).clientSecret.split('_secret_')[0]!;
    fake.authenticate(setupId, 'complete');
    const confirmed = await anonymous.customerPortal.customers.confirmPaymentMethod(session, { setupIntentId: setupId, setDefault: false });
    expect(confirmed).toMatchObject({ status: 'succeeded', paymentMethod: { methodMetadata: { last4: '3155' } } });

    // Deleting a card detaches it from the customer at Stripe, not only in Till.
    await anonymous.customerPortal.customers.deletePaymentMethod(session, { id: String(first.id) });
    expect(fake.state.paymentMethods.get(String(first.processor_method_id))?.customer).toBeNull();
    expect(await daemon.db('payment_methods').where({ id: first.id })).toEqual([]);
  });
});
