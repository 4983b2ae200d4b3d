import type { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from './testing/auth-client.js';
import { eventually, renewNow, startStripeTestbed, type StripeTestbed } from './testing/stripe.js';
import { createOrganization, polarSdk } from './testing/v1.js';

/**
 * Issue 16 through Stripe (the fake): a renewal that needs the customer's authentication moves the subscription to
 * past_due and mails a link; on its page the customer pays with Stripe's Payment Element (a ConfirmationToken
 * posted), 3-D Secure included, and the subscription is active again.
 */
let bed: StripeTestbed;
let owner: SignedIn;
let organizationId: string;
let sdk: Polar;

const daemon = () => bed.daemon;

async function subscribe(paymentMethod: string, email: string): Promise<string> {
  const product = await sdk.products.create({ organizationId, name: `Club ${email}`, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1500 }] } as ProductCreate);
  const checkout = await sdk.checkouts.create({ products: [product.id], customerEmail: email, customerName: 'Sam Stripe' });
  await polarSdk(daemon().url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: await bed.token(paymentMethod), customerBillingAddress: { country: 'US' } } });
  const [first] = await daemon().db('payments').where({ checkout_id: checkout.id });
  if (first.status === 'requires_action') bed.fake.authenticate(String(first.processor_payment_id), 'complete');
  const done = await eventually(async () => {
    const current = await sdk.checkouts.get({ id: checkout.id });
    return current.status === 'succeeded' ? current : undefined;
  }, 'the checkout to succeed');
  return done.subscriptionId!;
}

/** Renews now; the renewal needs authentication off-session, so it fails and the customer is mailed a link. */
async function renewalNeedingAuthentication(email: string): Promise<{ subscriptionId: string; path: string; orderId: string; subject: string }> {
  const subscriptionId = await subscribe('pm_card_authenticationRequired', email);
  await renewNow(daemon(), subscriptionId);
  // The customer gets other mails too (the receipt of the first payment): the one with the link is looked for.
  const mail = await eventually(async () => (await daemon().db('mail_outbox').where({ to_address: email })).find((row) => String(row.body).includes('/pay/till_pay_')), 'the pay-link mail', 60_000);
  const url = /(https?:\/\/\S+\/pay\/till_pay_[A-Za-z0-9_-]+)/.exec(String(mail.body))![1];
  expect((await daemon().db('subscriptions').where({ id: subscriptionId }).first()).status).toBe('past_due');
  const order = await daemon().db('orders').where({ subscription_id: subscriptionId, billing_reason: 'subscription_cycle' }).first();
  return { subscriptionId, path: new URL(url).pathname, orderId: String(order.id), subject: String(mail.subject) };
}

const postForm = (path: string, form: Record<string, string>) =>
  fetch(`${daemon().url}${path}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: daemon().url }, body: new URLSearchParams(form) });

beforeAll(async () => {
  bed = await startStripeTestbed({ TILL_JOB_INTERVAL_MS: '200' });
  owner = await signUp(bed.daemon.url, { name: 'Lina Link' });
  organizationId = await createOrganization(owner, 'Stripe Club');
  sdk = polarSdk(bed.daemon.url, owner.token);
});
afterAll(() => bed?.close());

describe('the pay link of a Stripe organization (the fake)', { timeout: 120_000 }, () => {
  it('mails "confirm your payment" after authentication_required, and the page pays with a ConfirmationToken from the Payment Element', async () => {
    const { subscriptionId, path, orderId, subject } = await renewalNeedingAuthentication('confirm@example.com');
    expect(subject).toBe('Confirm your payment to Stripe Club');
    const shown = await fetch(`${daemon().url}${path}`);
    expect(shown.status).toBe(200);
    const html = await shown.text();
    expect(html).toContain('id="payment-element"');
    expect(html).toContain(`data-publishable-key="${bed.fake.publishableKey}"`);
    expect(html).toContain('data-setup-future-usage="off_session"');
    expect(html).not.toContain('sandbox-cards');
    expect(shown.headers.get('content-security-policy')).toContain('https://js.stripe.com');
    // Card numbers never reach tilld on a Stripe organization; without the token the page asks for JavaScript.
    expect((await postForm(path, { intent: 'pay' })).status).toBe(400);

    const res = await postForm(path, { intent: 'pay', confirmation_token_id: await bed.token('pm_card_visa') });
    expect(res.status).toBe(303);
    const [payment] = await daemon().db('payments').where({ order_id: orderId, purpose: 'pay_link' });
    expect(payment).toMatchObject({ status: 'succeeded', processor: 'stripe' });
    expect([0, false]).toContain(payment.off_session);
    const intent = bed.fake.state.paymentIntents.get(String(payment.processor_payment_id))!;
    expect(intent).toMatchObject({ status: 'succeeded', amount: 1500, metadata: { till_payment_id: payment.id }, setup_future_usage: 'off_session' });
    expect(await daemon().db('orders').where({ id: orderId }).first()).toMatchObject({ status: 'paid', payment_id: payment.id });
    const s = await daemon().db('subscriptions').where({ id: subscriptionId }).first();
    expect(s.status).toBe('active');
    // The card saved at Stripe by this payment is the subscription's now.
    const method = await daemon().db('payment_methods').where({ id: s.payment_method_id }).first();
    expect(String(method.processor_method_id)).toBe(intent.payment_method);
    expect((await fetch(`${daemon().url}${path}`).then((r) => r.text()))).toContain('Your renewal is paid');
  });

  it('sends the customer through 3-D Secure at Stripe and back: Stripe\'s event and the return page settle it as paid', async () => {
    const { subscriptionId, path, orderId } = await renewalNeedingAuthentication('threeds@example.com');
    const res = await postForm(path, { intent: 'pay', confirmation_token_id: await bed.token('pm_card_threeDSecure2Required') });
    expect(res.status).toBe(200);
    const [waiting] = await daemon().db('payments').where({ order_id: orderId, purpose: 'pay_link' });
    expect(waiting).toMatchObject({ status: 'requires_action' });
    expect(await res.text()).toContain('Continue to your bank');
    const intent = bed.fake.state.paymentIntents.get(String(waiting.processor_payment_id))!;
    const returnUrl = intent.next_action?.redirect_to_url?.return_url ?? '';
    expect(returnUrl).toMatch(new RegExp(`^${daemon().url}/pay/return/${waiting.id}\\?key=[A-Za-z0-9_-]{32}$`));

    bed.fake.authenticate(String(waiting.processor_payment_id), 'complete');
    // Stripe's return without the key it was given (the payment id alone) is refused, and settles nothing.
    expect((await fetch(`${daemon().url}/pay/return/${waiting.id}?payment_intent=${intent.id}&redirect_status=succeeded`)).status).toBe(404);
    const back = await fetch(`${returnUrl}&payment_intent=${intent.id}&redirect_status=succeeded`);
    expect(back.status).toBe(200);
    expect(await back.text()).toContain('Your renewal is paid');
    await eventually(async () => ((await daemon().db('subscriptions').where({ id: subscriptionId }).first()).status === 'active' ? true : undefined), 'active');
    expect(await daemon().db('payments').where({ order_id: orderId, status: 'succeeded' })).toHaveLength(1);
  });
});
