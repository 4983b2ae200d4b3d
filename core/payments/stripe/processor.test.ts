import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IntentRequest, PaymentProcessor } from '../processor.js';
import { startStripeFake, type StripeFake } from './fake.js';
import { createStripeProcessor } from './processor.js';

let fake: StripeFake;
let processor: PaymentProcessor;
let stripe: Stripe;
let sequence = 0;

beforeAll(async () => {
  fake = await startStripeFake();
  processor = createStripeProcessor({ secretKey: fake.secretKey, apiBase: fake.url });
  stripe = new Stripe(fake.secretKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
});
afterAll(() => fake.close());

const payer = { email: 'buyer@example.com', name: 'Buyer', processorCustomerId: null };
const token = async (paymentMethod: string) => (await stripe.testHelpers.confirmationTokens.create({ payment_method: paymentMethod })).id;

function request(method: { processorMethodId: string; processorCustomerId: string | null }, overrides: Partial<IntentRequest> = {}): IntentRequest {
  sequence += 1;
  return {
    idempotencyKey: `till_pay_${sequence}_${Date.now()}`,
    paymentId: `pay_${sequence}_${Date.now()}`,
    processorMethodId: method.processorMethodId,
    processorCustomerId: method.processorCustomerId,
    amount: 2500,
    currency: 'usd',
    description: 'Pro plan',
    offSession: false,
    returnUrl: 'https://till.example/checkout/cs_1/return',
    ...overrides,
  };
}

describe('the Stripe processor, against the Stripe fake', () => {
  it('refuses card numbers: card data never reaches tilld', async () => {
    await expect(processor.setupPaymentMethod({ kind: 'card', number: '4242424242424242', expMonth: 1, expYear: 2040, cvc: '123' })).rejects.toMatchObject({ code: 'CARD_DATA_NOT_ACCEPTED' });
  });

  it('reads a ConfirmationToken (brand, last four, expiry), makes the Stripe customer, and refuses an unknown token', async () => {
    const method = await processor.setupPaymentMethod({ kind: 'token', token: await token('pm_card_visa') }, payer);
    expect(method).toMatchObject({ processorMethodId: expect.stringMatching(/^ctoken_/), processorCustomerId: expect.stringMatching(/^cus_/), brand: 'visa', last4: '4242' });
    expect(fake.state.customers.get(method.processorCustomerId!)?.email).toBe('buyer@example.com');
    await expect(processor.setupPaymentMethod({ kind: 'token', token: 'ctoken_nope' }, payer)).rejects.toMatchObject({ code: 'INVALID_CONFIRMATION_TOKEN', kind: 'invalid' });
  });

  it('pays on-session, saves the card for renewals, and charges it off-session', async () => {
    const method = await processor.setupPaymentMethod({ kind: 'token', token: await token('pm_card_visa') }, payer);
    const first = await processor.createIntent(request(method));
    expect(first).toMatchObject({ status: 'succeeded', processorIntentId: expect.stringMatching(/^pi_/), savedMethodId: expect.stringMatching(/^pm_/) });
    if (first.status !== 'succeeded') throw new Error('unreachable');
    expect(fake.state.paymentIntents.get(first.processorIntentId)?.metadata).toEqual({ till_payment_id: expect.stringMatching(/^pay_/) });
    const renewal = await processor.createIntent(request({ processorMethodId: first.savedMethodId!, processorCustomerId: method.processorCustomerId }, { offSession: true, returnUrl: null }));
    expect(renewal).toMatchObject({ status: 'succeeded', savedMethodId: null });
  });

  it('never charges twice for one idempotency key, and finds an intent whose answer was lost by Till\'s payment id', async () => {
    const method = await processor.setupPaymentMethod({ kind: 'token', token: await token('pm_card_visa') }, payer);
    const once = request(method);
    const first = await processor.createIntent(once);
    expect(await processor.createIntent(once)).toEqual(first);
    expect([...fake.state.paymentIntents.values()].filter((intent) => intent.metadata.till_payment_id === once.paymentId)).toHaveLength(1);
    expect(await processor.retrieveIntent({ idempotencyKey: once.idempotencyKey, processorIntentId: null, paymentId: once.paymentId })).toEqual({ ...first, savedMethodId: expect.any(String) });
    expect(await processor.retrieveIntent({ idempotencyKey: 'never', processorIntentId: null, paymentId: 'pay_never_sent' })).toEqual({ status: 'not_found' });
  });

  it('answers a decline as failed with Stripe\'s decline code', async () => {
    const method = await processor.setupPaymentMethod({ kind: 'token', token: await token('pm_card_chargeDeclinedInsufficientFunds') }, payer);
    expect(await processor.createIntent(request(method))).toMatchObject({ status: 'failed', declineCode: 'insufficient_funds', processorIntentId: expect.stringMatching(/^pi_/) });
  });

  it('sends the customer to 3-D Secure, then reads the outcome; an abandoned one is canceled', async () => {
    const method = await processor.setupPaymentMethod({ kind: 'token', token: await token('pm_card_threeDSecure2Required') }, payer);
    const waiting = await processor.createIntent(request(method));
    expect(waiting).toMatchObject({ status: 'requires_action', redirectUrl: expect.stringContaining('/_fake/3ds/') });
    fake.authenticate(waiting.processorIntentId!, 'complete');
    expect(await processor.retrieveIntent({ idempotencyKey: 'x', processorIntentId: waiting.processorIntentId, paymentId: 'x' })).toMatchObject({ status: 'succeeded' });

    const other = await processor.setupPaymentMethod({ kind: 'token', token: await token('pm_card_threeDSecure2Required') }, payer);
    const abandoned = await processor.createIntent(request(other));
    expect(await processor.cancelIntent({ processorIntentId: abandoned.processorIntentId! })).toMatchObject({ status: 'failed', declineCode: 'canceled' });
  });

  it('fails an off-session renewal that needs authentication with authentication_required', async () => {
    const customer = await stripe.customers.create({ email: 'renew@example.com' });
    const method = await stripe.paymentMethods.attach('pm_card_authenticationRequired', { customer: customer.id });
    expect(await processor.createIntent(request({ processorMethodId: method.id, processorCustomerId: customer.id }, { offSession: true, returnUrl: null }))).toMatchObject({
      status: 'failed',
      declineCode: 'authentication_required',
    });
  });

  it('answers processing for a bank debit, and failed once it fails', async () => {
    const sepa = await stripe.testHelpers.confirmationTokens.create({ payment_method_data: { type: 'sepa_debit', sepa_debit: { iban: 'AT861904300235473202' } } });
    const method = await processor.setupPaymentMethod({ kind: 'token', token: sepa.id }, payer);
    const processing = await processor.createIntent(request(method, { currency: 'eur' }));
    expect(processing).toMatchObject({ status: 'processing' });
    fake.advance();
    expect(await processor.retrieveIntent({ idempotencyKey: 'x', processorIntentId: processing.processorIntentId!, paymentId: 'x' })).toMatchObject({ status: 'failed', declineCode: 'insufficient_funds' });
  });

  it('refunds once per key, refuses more than was paid, and reads a refund that failed late', async () => {
    const method = await processor.setupPaymentMethod({ kind: 'token', token: await token('pm_card_refundFail') }, payer);
    const paid = await processor.createIntent(request(method));
    const refund = { processorIntentId: paid.processorIntentId!, amount: 1000, currency: 'usd', idempotencyKey: `r_${Date.now()}`, refundId: `r_${Date.now()}` };
    const first = await processor.refund(refund);
    expect(first).toMatchObject({ status: 'succeeded', processorRefundId: expect.stringMatching(/^re_/) });
    expect(await processor.refund(refund)).toEqual(first);
    expect(await processor.refund({ ...refund, amount: 2000, idempotencyKey: 'other', refundId: 'other' })).toMatchObject({ status: 'failed', message: expect.stringContaining('greater than unrefunded') });
    fake.advance();
    expect(await processor.retrieveRefund({ idempotencyKey: refund.idempotencyKey, processorRefundId: first.processorRefundId, refundId: refund.refundId })).toMatchObject({ status: 'failed' });
  });
});
