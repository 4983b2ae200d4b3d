import { describe, expect, it } from 'vitest';
import { CoreError } from '../errors.js';
import { brandOf, createSandboxProcessor, passesLuhn } from './sandbox.js';

const now = new Date('2026-06-15T00:00:00Z');
const sandbox = createSandboxProcessor({ now: () => now });
const card = (number: string, extra: Partial<{ expMonth: number; expYear: number; cvc: string }> = {}) =>
  sandbox.setupPaymentMethod({ kind: 'card', number, expMonth: 12, expYear: 2030, cvc: '123', ...extra });
const chargeWith = async (number: string, offSession = false) =>
  sandbox.charge({ processorMethodId: (await card(number)).processorMethodId, amount: 1000, currency: 'usd', idempotencyKey: `k-${number}-${offSession}`, description: 'test', offSession });

describe('the sandbox processor', () => {
  it('charges 4242 4242 4242 4242 and keeps only brand and last four', async () => {
    const method = await card('4242 4242 4242 4242');
    expect(method).toMatchObject({ brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 });
    expect(JSON.stringify(method)).not.toContain('424242424242');
    expect(await chargeWith('4242424242424242')).toMatchObject({ status: 'succeeded' });
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
    expect(await sandbox.charge({ processorMethodId: declined.processorMethodId, amount: 50, currency: 'usd', idempotencyKey: 'd', description: '', offSession: false })).toMatchObject({ status: 'failed', declineCode: 'card_declined' });
    await expect(sandbox.setupPaymentMethod({ kind: 'token', token: 'tok_bogus' })).rejects.toThrow(/tok_visa/);
  });

  it('answers the same payment id for the same idempotency key, even from a fresh processor (stateless)', async () => {
    const method = await sandbox.setupPaymentMethod({ kind: 'token', token: 'tok_visa' });
    const input = { processorMethodId: method.processorMethodId, amount: 700, currency: 'eur', idempotencyKey: 'same', description: '', offSession: true };
    const first = await sandbox.charge(input);
    const again = await createSandboxProcessor().charge(input);
    expect(again).toEqual(first);
  });

  it('refunds up to what was charged, once per idempotency key', async () => {
    const method = await sandbox.setupPaymentMethod({ kind: 'token', token: 'tok_visa' });
    const charged = await sandbox.charge({ processorMethodId: method.processorMethodId, amount: 1000, currency: 'usd', idempotencyKey: 'refund-me', description: '', offSession: false });
    if (charged.status !== 'succeeded') throw new Error('charge failed');
    const refund = (amount: number, key: string) => sandbox.refund({ processorPaymentId: charged.processorPaymentId, amount, currency: 'usd', idempotencyKey: key });
    expect(await refund(600, 'r1')).toMatchObject({ status: 'succeeded' });
    expect(await refund(600, 'r1')).toMatchObject({ status: 'succeeded' });
    expect(await refund(500, 'r2')).toMatchObject({ status: 'failed' });
    expect(await refund(400, 'r3')).toMatchObject({ status: 'succeeded' });
  });

  it('knows the brands and the Luhn check', () => {
    expect(passesLuhn('4242424242424242')).toBe(true);
    expect(passesLuhn('4242424242424243')).toBe(false);
    expect(brandOf('5555555555554444')).toBe('mastercard');
    expect(brandOf('378282246310005')).toBe('amex');
  });
});
