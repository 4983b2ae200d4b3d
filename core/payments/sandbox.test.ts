import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreError } from '../errors.js';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import type { IntentRequest } from './processor.js';
import { brandOf, createSandboxProcessor, passesLuhn, type SandboxProcessor } from './sandbox.js';
import { findSandboxIntent } from './sandbox-ledger.js';

const now = new Date('2026-06-15T00:00:00Z');
let database: TestDatabase;
let sandbox: SandboxProcessor;
let keys = 0;

beforeAll(async () => {
  database = await createTestDatabase({ migrated: true });
  sandbox = createSandboxProcessor({ db: database.db, now: () => now, baseUrl: 'http://till.test' });
});
afterAll(async () => {
  await database?.destroy();
});

const card = (number: string, extra: Partial<{ expMonth: number; expYear: number; cvc: string }> = {}) =>
  sandbox.setupPaymentMethod({ kind: 'card', number, expMonth: 12, expYear: 2030, cvc: '123', ...extra });
const request = (processorMethodId: string, overrides: Partial<IntentRequest> = {}): IntentRequest => ({
  idempotencyKey: `k${++keys}`,
  paymentId: `p${keys}`,
  processorMethodId,
  processorCustomerId: null,
  amount: 1000,
  currency: 'usd',
  description: 'test',
  offSession: false,
  returnUrl: 'http://till.test/checkout/secret',
  ...overrides,
});
const chargeWith = async (number: string, offSession = false) => sandbox.createIntent(request((await card(number)).processorMethodId, { offSession }));

describe('the sandbox processor', () => {
  it('charges 4242 4242 4242 4242 and keeps only brand and last four', async () => {
    const method = await card('4242 4242 4242 4242');
    expect(method).toMatchObject({ brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, processorCustomerId: null });
    expect(JSON.stringify(method)).not.toContain('424242424242');
    expect(await chargeWith('4242424242424242')).toMatchObject({ status: 'succeeded', savedMethodId: null });
  });

  it('declines 0002, fails 9995 for insufficient funds, and declines 0341 off-session only', async () => {
    expect(await chargeWith('4000000000000002')).toMatchObject({ status: 'failed', declineCode: 'card_declined' });
    expect(await chargeWith('4000000000009995')).toMatchObject({ status: 'failed', declineCode: 'insufficient_funds' });
    expect(await chargeWith('4000000000000341')).toMatchObject({ status: 'succeeded' });
    expect(await chargeWith('4000000000000341', true)).toMatchObject({ status: 'failed', declineCode: 'card_declined' });
  });

  it('refuses a number failing the Luhn check, a past expiry and a short CVC with field-level errors', async () => {
    await expect(card('4242424242424241')).rejects.toMatchObject({ code: 'INVALID_CARD', details: [{ loc: ['body', 'card_number'] }] });
    await expect(card('4242424242424242', { expMonth: 5, expYear: 2026 })).rejects.toMatchObject({ details: [{ loc: ['body', 'card_expiry'] }] });
    await expect(card('4242424242424242', { expMonth: 13 })).rejects.toBeInstanceOf(CoreError);
    await expect(card('4242424242424242', { cvc: '12' })).rejects.toMatchObject({ details: [{ loc: ['body', 'card_cvc'] }] });
    // The current month is still valid.
    await expect(card('4242424242424242', { expMonth: 6, expYear: 26 })).resolves.toMatchObject({ expYear: 2026 });
  });

  it('takes the test tokens, and refuses an unknown token naming the known ones', async () => {
    const visa = await sandbox.setupPaymentMethod({ kind: 'token', token: 'tok_visa' });
    expect(visa).toMatchObject({ brand: 'visa', last4: '4242' });
    const declined = await sandbox.setupPaymentMethod({ kind: 'token', token: 'tok_chargeDeclined' });
    expect(await sandbox.createIntent(request(declined.processorMethodId))).toMatchObject({ status: 'failed', declineCode: 'card_declined' });
    await expect(sandbox.setupPaymentMethod({ kind: 'token', token: 'tok_bogus' })).rejects.toThrow(/tok_visa/);
  });

  it('answers the same intent for the same idempotency key, from a fresh processor too, and counts every call in its ledger', async () => {
    const method = await sandbox.setupPaymentMethod({ kind: 'token', token: 'tok_visa' });
    const input = request(method.processorMethodId, { offSession: true, currency: 'eur', amount: 700 });
    const first = await sandbox.createIntent(input);
    const again = await createSandboxProcessor({ db: database.db }).createIntent(input);
    expect(again).toEqual(first);
    expect(await findSandboxIntent(database.db, { idempotencyKey: input.idempotencyKey })).toMatchObject({ calls: 2, amount: 700, status: 'succeeded' });
    expect(await sandbox.retrieveIntent({ idempotencyKey: input.idempotencyKey, processorIntentId: null, paymentId: input.paymentId })).toEqual(first);
    expect(await sandbox.retrieveIntent({ idempotencyKey: 'never-sent', processorIntentId: null, paymentId: 'x' })).toEqual({ status: 'not_found' });
  });

  it('asks for 3-D Secure on 3184 on-session, completes or abandons it, and declines it off-session', async () => {
    const method = await card('4000002760003184');
    const waiting = await sandbox.createIntent(request(method.processorMethodId));
    expect(waiting).toMatchObject({ status: 'requires_action' });
    if (waiting.status !== 'requires_action') throw new Error('no action');
    expect(waiting.redirectUrl).toBe(`http://till.test/sandbox/authenticate/${waiting.processorIntentId}`);
    // The page's id is random, as Stripe's: nothing that knows only Till's payment id (or its key) can make it.
    const { idempotencyKey: key } = (await findSandboxIntent(database.db, { id: waiting.processorIntentId }))!;
    expect(waiting.processorIntentId).toMatch(/^pi_sandbox_[0-9a-f]{24}$/);
    expect(waiting.processorIntentId).not.toContain(createHash('sha256').update(`intent:${key}`).digest('hex').slice(0, 24));
    expect(await sandbox.authenticate(waiting.processorIntentId, true)).toMatchObject({ outcome: { status: 'succeeded' } });
    // Authenticating twice changes nothing.
    expect(await sandbox.authenticate(waiting.processorIntentId, false)).toMatchObject({ outcome: { status: 'succeeded' } });

    const abandoned = await sandbox.createIntent(request(method.processorMethodId));
    if (abandoned.status !== 'requires_action') throw new Error('no action');
    expect(await sandbox.cancelIntent({ processorIntentId: abandoned.processorIntentId })).toMatchObject({ status: 'failed', declineCode: 'authentication_failed' });

    expect(await sandbox.createIntent(request(method.processorMethodId, { offSession: true }))).toMatchObject({ status: 'failed', declineCode: 'authentication_required' });
    const declinedAfter = await sandbox.createIntent(request((await card('4000008400001629')).processorMethodId));
    if (declinedAfter.status !== 'requires_action') throw new Error('no action');
    expect(await sandbox.authenticate(declinedAfter.processorIntentId, true)).toMatchObject({ outcome: { status: 'failed', declineCode: 'card_declined' } });
  });

  it('answers processing for 8807 and 8815, settled when asked again: paid, or declined', async () => {
    for (const [number, settled] of [['4000000000008807', 'succeeded'], ['4000000000008815', 'failed']] as const) {
      const input = request((await card(number)).processorMethodId);
      expect(await sandbox.createIntent(input)).toMatchObject({ status: 'processing' });
      expect(await sandbox.retrieveIntent({ idempotencyKey: input.idempotencyKey, processorIntentId: null, paymentId: input.paymentId })).toMatchObject({ status: settled });
    }
  });

  it('refunds up to what was charged, once per idempotency key', async () => {
    const method = await sandbox.setupPaymentMethod({ kind: 'token', token: 'tok_visa' });
    const charged = await sandbox.createIntent(request(method.processorMethodId));
    if (charged.status !== 'succeeded') throw new Error('charge failed');
    const refund = (amount: number, key: string) => sandbox.refund({ processorIntentId: charged.processorIntentId, amount, currency: 'usd', idempotencyKey: key, refundId: key });
    expect(await refund(600, 'r1')).toMatchObject({ status: 'succeeded' });
    expect(await refund(600, 'r1')).toMatchObject({ status: 'succeeded' });
    expect(await refund(500, 'r2')).toMatchObject({ status: 'failed' });
    expect(await refund(400, 'r3')).toMatchObject({ status: 'succeeded' });
  });

  it('keeps 7726 refunds pending until asked again, and fails 5126 refunds late', async () => {
    for (const [number, settled] of [['4000000000007726', 'succeeded'], ['4000000000005126', 'failed']] as const) {
      const charged = await sandbox.createIntent(request((await card(number)).processorMethodId));
      if (charged.status !== 'succeeded') throw new Error('charge failed');
      const key = `late-${number}`;
      expect(await sandbox.refund({ processorIntentId: charged.processorIntentId, amount: 1000, currency: 'usd', idempotencyKey: key, refundId: key })).toMatchObject({ status: 'pending' });
      expect(await sandbox.retrieveRefund({ idempotencyKey: key, processorRefundId: null, refundId: key })).toMatchObject({ status: settled });
    }
    expect(await sandbox.retrieveRefund({ idempotencyKey: 'never', processorRefundId: null, refundId: 'never' })).toEqual({ status: 'not_found' });
  });

  it('knows the brands and the Luhn check', () => {
    expect(passesLuhn('4242424242424242')).toBe(true);
    expect(passesLuhn('4242424242424243')).toBe(false);
    expect(brandOf('5555555555554444')).toBe('mastercard');
    expect(brandOf('378282246310005')).toBe('amex');
  });
});
