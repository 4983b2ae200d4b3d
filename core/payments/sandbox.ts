import { createHash, randomBytes } from 'node:crypto';
import { CoreError } from '../errors.js';
import type { ChargeOutcome, DeclineCode, PaymentMethodInput, PaymentProcessor, RefundOutcome, SavedPaymentMethod } from './processor.js';

/**
 * What a sandbox card does when charged. `fails_off_session` is Stripe's 4000 0000 0000 0341: it is saved and
 * pays while the customer is there, and declines every later off-session charge (a renewal).
 */
type Behaviour = 'succeeds' | DeclineCode | 'fails_off_session';

const CODE_OF: Record<Behaviour, string> = {
  succeeds: 'ok',
  card_declined: 'dcl',
  insufficient_funds: 'nsf',
  expired_card: 'exp',
  processing_error: 'err',
  fails_off_session: 'cuf',
};
const BEHAVIOUR_OF = Object.fromEntries(Object.entries(CODE_OF).map(([behaviour, code]) => [code, behaviour])) as Record<string, Behaviour>;

/** The well-known test card numbers (Stripe's), and what they do. Any other valid number succeeds. */
export const SANDBOX_CARDS: Readonly<Record<string, Behaviour>> = {
  '4242424242424242': 'succeeds',
  '5555555555554444': 'succeeds',
  '4000000000000002': 'card_declined',
  '4000000000009995': 'insufficient_funds',
  '4000000000000069': 'expired_card',
  '4000000000000119': 'processing_error',
  '4000000000000341': 'fails_off_session',
};

/** Test tokens a script passes as `confirmation_token_id` instead of a card (Stripe test mode's names). */
export const SANDBOX_TOKENS: Readonly<Record<string, { behaviour: Behaviour; brand: string; last4: string }>> = {
  tok_visa: { behaviour: 'succeeds', brand: 'visa', last4: '4242' },
  tok_mastercard: { behaviour: 'succeeds', brand: 'mastercard', last4: '4444' },
  tok_chargeDeclined: { behaviour: 'card_declined', brand: 'visa', last4: '0002' },
  tok_chargeDeclinedInsufficientFunds: { behaviour: 'insufficient_funds', brand: 'visa', last4: '9995' },
  tok_chargeDeclinedExpiredCard: { behaviour: 'expired_card', brand: 'visa', last4: '0069' },
  tok_chargeDeclinedProcessingError: { behaviour: 'processing_error', brand: 'visa', last4: '0119' },
  tok_chargeCustomerFail: { behaviour: 'fails_off_session', brand: 'visa', last4: '0341' },
};

const DECLINE_MESSAGES: Record<DeclineCode, string> = {
  card_declined: 'Your card was declined.',
  insufficient_funds: 'Your card has insufficient funds.',
  expired_card: 'Your card has expired.',
  processing_error: 'An error occurred while processing your card. Try again in a little bit.',
};

/** The Luhn checksum every real card number passes. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The card network of a number, by its leading digits. */
export function brandOf(digits: string): string {
  if (/^4/.test(digits)) return 'visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(digits)) return 'mastercard';
  if (/^3[47]/.test(digits)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(digits)) return 'discover';
  if (/^35(2[89]|[3-8])/.test(digits)) return 'jcb';
  if (/^3(0[0-5]|[68])/.test(digits)) return 'diners';
  if (/^62/.test(digits)) return 'unionpay';
  return 'unknown';
}

const cardIssue = (field: string, msg: string) =>
  new CoreError('invalid', 'INVALID_CARD', msg, [{ loc: ['body', field], msg, type: 'card_error' }]);

/** Checks a typed card the way a card form does; the number itself never leaves this function. */
function checkCard(input: Extract<PaymentMethodInput, { kind: 'card' }>, now: Date): { behaviour: Behaviour; brand: string; last4: string } {
  const digits = input.number.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits)) throw cardIssue('card_number', 'Your card number is incomplete or not a number.');
  if (!passesLuhn(digits)) throw cardIssue('card_number', 'Your card number is invalid.');
  const brand = brandOf(digits);
  if (!Number.isInteger(input.expMonth) || input.expMonth < 1 || input.expMonth > 12) throw cardIssue('card_expiry', "Your card's expiration month is invalid.");
  const year = input.expYear < 100 ? 2000 + input.expYear : input.expYear;
  if (!Number.isInteger(year) || year > now.getUTCFullYear() + 50) throw cardIssue('card_expiry', "Your card's expiration year is invalid.");
  // A card is valid through the last day of its expiry month.
  if (year < now.getUTCFullYear() || (year === now.getUTCFullYear() && input.expMonth < now.getUTCMonth() + 1)) {
    throw cardIssue('card_expiry', "Your card's expiration date is in the past.");
  }
  if (!(brand === 'amex' ? /^\d{4}$/ : /^\d{3}$/).test(input.cvc)) throw cardIssue('card_cvc', "Your card's security code is incomplete.");
  return { behaviour: SANDBOX_CARDS[digits] ?? 'succeeds', brand, last4: digits.slice(-4) };
}

const METHOD_PREFIX = 'pm_sandbox_';

/** The method id carries its behaviour, so charges need no state and survive a daemon restart. */
function parseMethodId(id: string): Behaviour | undefined {
  if (!id.startsWith(METHOD_PREFIX)) return undefined;
  return BEHAVIOUR_OF[id.slice(METHOD_PREFIX.length).split('_')[0]];
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 24);

/**
 * The built-in processor of test mode. Stateless: a method's behaviour is in its id, a payment's amount and
 * currency in its id, and ids derive from the idempotency key, so retrying a charge or refund answers the same
 * id (a retry after a restart included). Refunds in flight are counted per process to refuse refunding more
 * than was charged; the domains keep their own, authoritative, refundable amounts.
 */
export function createSandboxProcessor(options: { now?: () => Date } = {}): PaymentProcessor {
  const now = options.now ?? (() => new Date());
  const refunded = new Map<string, Map<string, number>>();
  return {
    name: 'sandbox',

    async setupPaymentMethod(input: PaymentMethodInput): Promise<SavedPaymentMethod> {
      let card: { behaviour: Behaviour; brand: string; last4: string };
      let expMonth: number | null = null;
      let expYear: number | null = null;
      if (input.kind === 'token') {
        const token = SANDBOX_TOKENS[input.token];
        if (!token) {
          const msg = `Unknown test token ${JSON.stringify(input.token)}; use one of ${Object.keys(SANDBOX_TOKENS).join(', ')}`;
          throw new CoreError('invalid', 'INVALID_CONFIRMATION_TOKEN', msg, [{ loc: ['body', 'confirmation_token_id'], msg, type: 'value_error' }]);
        }
        card = token;
      } else {
        card = checkCard(input, now());
        expMonth = input.expMonth;
        expYear = input.expYear < 100 ? 2000 + input.expYear : input.expYear;
      }
      return {
        processorMethodId: `${METHOD_PREFIX}${CODE_OF[card.behaviour]}_${randomBytes(9).toString('base64url')}`,
        brand: card.brand,
        last4: card.last4,
        expMonth,
        expYear,
      };
    },

    async charge(input): Promise<ChargeOutcome> {
      const behaviour = parseMethodId(input.processorMethodId);
      if (!behaviour) return { status: 'failed', declineCode: 'processing_error', message: 'This payment method is not known to the sandbox processor.' };
      if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw new Error(`sandbox charge of a non-positive amount: ${input.amount}`);
      const decline: DeclineCode | null =
        behaviour === 'succeeds' ? null : behaviour === 'fails_off_session' ? (input.offSession ? 'card_declined' : null) : behaviour;
      if (decline) return { status: 'failed', declineCode: decline, message: DECLINE_MESSAGES[decline] };
      return { status: 'succeeded', processorPaymentId: `py_sandbox_${input.amount}_${input.currency}_${digest(`charge:${input.idempotencyKey}`)}` };
    },

    async refund(input): Promise<RefundOutcome> {
      const match = /^py_sandbox_(\d+)_([a-z]{3})_[0-9a-f]+$/.exec(input.processorPaymentId);
      if (!match) return { status: 'failed', message: 'This payment is not known to the sandbox processor.' };
      const [, charged, currency] = match;
      if (currency !== input.currency) return { status: 'failed', message: `The payment was in ${currency}, not ${input.currency}.` };
      const byKey = refunded.get(input.processorPaymentId) ?? new Map<string, number>();
      const processorRefundId = `re_sandbox_${digest(`refund:${input.idempotencyKey}`)}`;
      if (byKey.has(input.idempotencyKey)) return { status: 'succeeded', processorRefundId };
      const already = [...byKey.values()].reduce((sum, amount) => sum + amount, 0);
      if (input.amount <= 0 || already + input.amount > Number(charged)) {
        return { status: 'failed', message: `Cannot refund ${input.amount}: ${Number(charged) - already} of the payment is left to refund.` };
      }
      byKey.set(input.idempotencyKey, input.amount);
      refunded.set(input.processorPaymentId, byKey);
      return { status: 'succeeded', processorRefundId };
    },
  };
}

/** The default processor of every daemon: test cards and tokens, no network. */
export const sandboxProcessor: PaymentProcessor = createSandboxProcessor();
