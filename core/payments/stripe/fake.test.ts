import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStripeFake, type StripeFake } from './fake.js';

let fake: StripeFake;
let stripe: Stripe;
const received: Array<{ event: Stripe.Event | null; error: string | null }> = [];
let closeReceiver: () => Promise<void>;

/** Polls until `check` passes; the machine may be busy, so no fixed sleeps. */
async function eventually<T>(read: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  fake = await startStripeFake();
  stripe = new Stripe(fake.secretKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const event = stripe.webhooks.constructEvent(Buffer.concat(chunks), String(req.headers['stripe-signature'] ?? ''), fake.webhookSecret);
        received.push({ event, error: null });
        res.writeHead(200).end();
      } catch (error) {
        received.push({ event: null, error: (error as Error).message });
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  fake.setWebhookUrl(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`);
  closeReceiver = () => new Promise((resolve) => receiver.close(() => resolve()));
});

afterAll(async () => {
  await fake.close();
  await closeReceiver();
});

const pay = (paymentMethod: string, extra: Stripe.PaymentIntentCreateParams = { amount: 0, currency: '' }) =>
  stripe.paymentIntents.create({ amount: 2000, currency: 'usd', payment_method: paymentMethod, confirm: true, ...Object.fromEntries(Object.entries(extra).filter(([, value]) => value !== 0 && value !== '')) });

describe('the Stripe fake, through the stripe package', () => {
  it('refuses a request without the secret key, and a secret call made with the publishable key', async () => {
    const stranger = new Stripe('sk_test_wrong_key_1234', { ...fake.clientOptions, maxNetworkRetries: 0 });
    await expect(stranger.customers.create({})).rejects.toMatchObject({ type: 'StripeAuthenticationError', statusCode: 401 });
    const browser = new Stripe(fake.publishableKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
    await expect(browser.paymentIntents.create({ amount: 100, currency: 'usd' })).rejects.toMatchObject({ statusCode: 401, message: expect.stringContaining('publishable API key') });
  });

  it('pays with pm_card_visa, making a fresh PaymentMethod with the card\'s brand and last four', async () => {
    const intent = await pay('pm_card_visa', { amount: 0, currency: '', metadata: { till: 'x' } });
    expect(intent).toMatchObject({ object: 'payment_intent', status: 'succeeded', amount: 2000, amount_received: 2000, currency: 'usd', metadata: { till: 'x' } });
    expect(intent.payment_method).toMatch(/^pm_(?!card_)/);
    const method = await stripe.paymentMethods.retrieve(String(intent.payment_method));
    expect(method.card).toMatchObject({ brand: 'visa', last4: '4242' });
    const expanded = await stripe.paymentIntents.retrieve(intent.id, { expand: ['latest_charge'] });
    expect(expanded.latest_charge).toMatchObject({ object: 'charge', status: 'succeeded', paid: true, amount_captured: 2000 });
  });

  it('answers a decline with a 402 card error carrying the intent, which waits for another method', async () => {
    const error = await pay('pm_card_chargeDeclinedInsufficientFunds').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    const cardError = error as Stripe.errors.StripeCardError;
    expect(cardError).toMatchObject({ statusCode: 402, code: 'card_declined', decline_code: 'insufficient_funds' });
    expect(cardError.payment_intent).toMatchObject({ status: 'requires_payment_method', last_payment_error: { code: 'card_declined' } });
    const again = await stripe.paymentIntents.confirm(cardError.payment_intent!.id, { payment_method: 'pm_card_visa' });
    expect(again.status).toBe('succeeded');
  });

  it('asks for 3-D Secure with a redirect, and settles the intent when the customer completes or fails it', async () => {
    const waiting = await pay('pm_card_threeDSecure2Required', { amount: 0, currency: '', return_url: 'https://shop.example/back' });
    expect(waiting).toMatchObject({ status: 'requires_action', next_action: { type: 'redirect_to_url', redirect_to_url: { return_url: 'https://shop.example/back' } } });
    const page = await fetch(waiting.next_action!.redirect_to_url!.url!);
    expect(await page.text()).toContain('Complete authentication');
    const done = await fetch(`${fake.url}/_fake/3ds/${waiting.id}`, { method: 'POST', body: new URLSearchParams({ outcome: 'complete', return_url: 'https://shop.example/back' }), redirect: 'manual' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`https://shop.example/back?payment_intent=${waiting.id}&payment_intent_client_secret=${encodeURIComponent(waiting.client_secret!).replace(/%20/g, '+')}&redirect_status=succeeded`);
    expect((await stripe.paymentIntents.retrieve(waiting.id)).status).toBe('succeeded');

    const abandoned = await pay('pm_card_threeDSecure2Required', { amount: 0, currency: '', return_url: 'https://shop.example/back' });
    fake.authenticate(abandoned.id, 'fail');
    expect(await stripe.paymentIntents.retrieve(abandoned.id)).toMatchObject({ status: 'requires_payment_method', last_payment_error: { code: 'payment_intent_authentication_failure' } });
  });

  it('charges a saved card off-session, and refuses one that needs authentication with authentication_required', async () => {
    const customer = await stripe.customers.create({ email: 'buyer@example.com' });
    const setup = await stripe.setupIntents.create({ customer: customer.id, payment_method: 'pm_card_visa', confirm: true, usage: 'off_session' });
    expect(setup.status).toBe('succeeded');
    const renewal = await stripe.paymentIntents.create({ amount: 900, currency: 'eur', customer: customer.id, payment_method: String(setup.payment_method), off_session: true, confirm: true });
    expect(renewal.status).toBe('succeeded');

    const strict = await stripe.paymentMethods.attach('pm_card_authenticationRequired', { customer: customer.id });
    const error = (await stripe.paymentIntents.create({ amount: 900, currency: 'eur', customer: customer.id, payment_method: strict.id, off_session: true, confirm: true }).catch((caught: unknown) => caught)) as Stripe.errors.StripeCardError;
    expect(error).toMatchObject({ statusCode: 402, code: 'authentication_required' });
    expect(error.payment_intent?.status).toBe('requires_payment_method');

    const methods = await stripe.customers.listPaymentMethods(customer.id);
    expect(methods.data.map((method) => method.id)).toEqual(expect.arrayContaining([strict.id, String(setup.payment_method)]));
    await expect(stripe.paymentMethods.attach('pm_card_chargeDeclined', { customer: customer.id })).rejects.toMatchObject({ code: 'card_declined' });
  });

  it('confirms with a ConfirmationToken made by Stripe.js (publishable key) once, and saves the card for later', async () => {
    const browser = new Stripe(fake.publishableKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
    // Stripe.js posts the card to Stripe with the publishable key; the seller's server only ever sees the token id.
    const token = (await browser.rawRequest('POST', '/v1/confirmation_tokens', {
      payment_method_data: { type: 'card', card: { number: '4000002500003155', exp_month: 12, exp_year: 2040, cvc: '123' }, billing_details: { name: 'Ada', email: 'ada@example.com' } },
      setup_future_usage: 'off_session',
    })) as unknown as Stripe.ConfirmationToken;
    expect(token.payment_method_preview?.card).toMatchObject({ brand: 'visa', last4: '3155', exp_year: 2040 });
    const customer = await stripe.customers.create({ email: 'ada@example.com' });
    const intent = await stripe.paymentIntents.create({ amount: 1500, currency: 'usd', customer: customer.id, confirmation_token: token.id, confirm: true, return_url: 'https://shop.example/back' });
    expect(intent.status).toBe('requires_action');
    fake.authenticate(intent.id, 'complete');
    const paid = await stripe.paymentIntents.retrieve(intent.id);
    expect(paid.status).toBe('succeeded');
    // Authenticated once while saving: later renewals go through without the customer.
    const renewal = await stripe.paymentIntents.create({ amount: 1500, currency: 'usd', customer: customer.id, payment_method: String(paid.payment_method), off_session: true, confirm: true });
    expect(renewal.status).toBe('succeeded');
    await expect(stripe.paymentIntents.create({ amount: 1, currency: 'usd', confirmation_token: token.id, confirm: true })).rejects.toMatchObject({ code: 'confirmation_token_already_used' });
    const helper = await stripe.testHelpers.confirmationTokens.create({ payment_method: 'pm_card_visa' });
    expect(helper.payment_method_preview?.card?.last4).toBe('4242');
  });

  it('keeps a bank debit processing until later, then fails it', async () => {
    const token = await stripe.testHelpers.confirmationTokens.create({
      payment_method_data: { type: 'sepa_debit', sepa_debit: { iban: 'AT861904300235473202' }, billing_details: { name: 'Ada', email: 'ada@example.com' } },
    });
    const intent = await stripe.paymentIntents.create({ amount: 3000, currency: 'eur', confirmation_token: token.id, confirm: true });
    expect(intent.status).toBe('processing');
    fake.advance();
    expect(await stripe.paymentIntents.retrieve(intent.id)).toMatchObject({ status: 'requires_payment_method', last_payment_error: { code: 'insufficient_funds' } });
  });

  it('refunds in parts up to what was paid, and a refund of pm_card_refundFail fails later, giving the amount back', async () => {
    const intent = await pay('pm_card_visa');
    expect(await stripe.refunds.create({ payment_intent: intent.id, amount: 500 })).toMatchObject({ status: 'succeeded', amount: 500 });
    await expect(stripe.refunds.create({ payment_intent: intent.id, amount: 1600 })).rejects.toMatchObject({ statusCode: 400, code: 'amount_too_large' });
    expect(await stripe.refunds.create({ payment_intent: intent.id })).toMatchObject({ amount: 1500 });
    await expect(stripe.refunds.create({ payment_intent: intent.id })).rejects.toMatchObject({ code: 'charge_already_refunded' });

    const fragile = await pay('pm_card_refundFail');
    const refund = await stripe.refunds.create({ payment_intent: fragile.id });
    expect(refund.status).toBe('succeeded');
    fake.advance();
    expect(await stripe.refunds.retrieve(refund.id)).toMatchObject({ status: 'failed', failure_reason: 'expired_or_canceled_card' });
    expect(await stripe.refunds.create({ payment_intent: fragile.id, amount: 100 })).toMatchObject({ amount: 100 });
  });

  it('opens a dispute on pm_card_createDispute, won with winning_evidence, lost when accepted', async () => {
    const won = await pay('pm_card_createDispute');
    const [dispute] = (await stripe.disputes.list({ payment_intent: won.id })).data;
    expect(dispute).toMatchObject({ status: 'needs_response', reason: 'fraudulent', amount: 2000, payment_intent: won.id });
    expect(await stripe.disputes.update(dispute.id, { evidence: { uncategorized_text: 'winning_evidence' } })).toMatchObject({ status: 'under_review' });
    fake.advance();
    expect((await stripe.disputes.retrieve(dispute.id)).status).toBe('won');

    const lost = await pay('pm_card_createDispute');
    const [other] = (await stripe.disputes.list({ payment_intent: lost.id })).data;
    expect(await stripe.disputes.close(other.id)).toMatchObject({ status: 'lost' });
    await expect(stripe.refunds.create({ payment_intent: lost.id })).rejects.toMatchObject({ code: 'charge_disputed' });
  });

  it('replays an idempotent request, and refuses the same key with other parameters', async () => {
    const key = `order-${Date.now()}`;
    const customer = await stripe.customers.create({ email: 'same@example.com' });
    const one = await stripe.paymentIntents.create({ amount: 700, currency: 'usd', customer: customer.id, payment_method: 'pm_card_visa', confirm: true }, { idempotencyKey: key });
    const two = await stripe.paymentIntents.create({ amount: 700, currency: 'usd', customer: customer.id, payment_method: 'pm_card_visa', confirm: true }, { idempotencyKey: key });
    expect(two.id).toBe(one.id);
    expect([...fake.state.paymentIntents.values()].filter((intent) => intent.customer === customer.id)).toHaveLength(1);
    expect(fake.calls.filter((call) => call.idempotencyKey === key).map((call) => call.replayed)).toEqual([false, true]);
    await expect(stripe.paymentIntents.create({ amount: 800, currency: 'usd', customer: customer.id }, { idempotencyKey: key })).rejects.toMatchObject({
      type: 'StripeIdempotencyError',
      message: expect.stringContaining('same parameters'),
    });
    // A declined charge is a result too: the same key answers the same decline.
    const declineKey = `${key}-declined`;
    const declined = (await stripe.paymentIntents.create({ amount: 700, currency: 'usd', payment_method: 'pm_card_chargeDeclined', confirm: true }, { idempotencyKey: declineKey }).catch((caught: unknown) => caught)) as Stripe.errors.StripeCardError;
    const replayed = (await stripe.paymentIntents.create({ amount: 700, currency: 'usd', payment_method: 'pm_card_chargeDeclined', confirm: true }, { idempotencyKey: declineKey }).catch((caught: unknown) => caught)) as Stripe.errors.StripeCardError;
    expect(replayed.payment_intent?.id).toBe(declined.payment_intent?.id);
  });

  it('answers an unknown id with resource_missing', async () => {
    await expect(stripe.paymentIntents.retrieve('pi_missing')).rejects.toMatchObject({ statusCode: 404, code: 'resource_missing', message: "No such payment_intent: 'pi_missing'" });
  });

  it('sends signed events the package verifies, in order, and can send one stale or unsigned', async () => {
    const intent = await pay('pm_card_visa');
    const succeeded = await eventually(() => received.find((item) => item.event?.type === 'payment_intent.succeeded' && (item.event.data.object as Stripe.PaymentIntent).id === intent.id), 'payment_intent.succeeded');
    const types = received.filter((item) => (item.event?.data.object as { id?: string; payment_intent?: string } | undefined)?.id === intent.id).map((item) => item.event!.type);
    expect(types).toEqual(['payment_intent.created', 'payment_intent.succeeded']);
    const eventId = succeeded.event!.id;
    expect(await fake.redeliver(eventId)).toMatchObject({ status: 200 });
    expect(await fake.redeliver(eventId, { signature: 'missing' })).toMatchObject({ status: 400 });
    expect(await fake.redeliver(eventId, { timestamp: Math.floor(Date.now() / 1000) - 301 })).toMatchObject({ status: 400 });
    expect(received.at(-1)?.error).toMatch(/tolerance/);
    expect(received.at(-2)?.error).toMatch(/No stripe-signature header/);
  });
});
