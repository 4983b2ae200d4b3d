import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../db/database.js';
import { CoreError } from '../errors.js';
import type { CardSetup, IntentLookup, IntentOutcome, IntentRequest, PaymentMethodInput, PaymentProcessor, RefundLookup, RefundOutcome, RefundRequest, SavedPaymentMethod } from './processor.js';
import { findSandboxIntent, findSandboxRefund, recordSandboxIntent, recordSandboxRefund, refundedOfSandboxIntent, updateSandboxIntent, updateSandboxRefund, type SandboxIntent, type SandboxRefund } from './sandbox-ledger.js';

/**
 * What a sandbox card does when charged (Stripe's test cards, see SANDBOX_CARDS):
 * - a decline code: declined with it;
 * - `fails_off_session` (0341): pays while the customer is there, declines every later off-session charge;
 * - `authenticates`, `authenticates_then_declined`, `authenticates_then_insufficient_funds`: 3-D Secure on every
 *   on-session charge (the customer completes or abandons it on the sandbox's authenticate page), then pays or
 *   declines; off-session, declined with `authentication_required` as a real issuer would;
 * - `processing_then_succeeds`, `processing_then_fails`: accepted as `processing`, settled the next time anyone
 *   asks (the settle job, or a test);
 * - `refund_pending` (7726): pays; its refunds are pending at first and succeed when asked again;
 * - `refund_fails_late` (5126): pays; its refunds succeed at first and fail when asked again (the card was closed).
 */
type Behaviour =
  | 'succeeds'
  | 'card_declined'
  | 'insufficient_funds'
  | 'expired_card'
  | 'processing_error'
  | 'fails_off_session'
  | 'authenticates'
  | 'authenticates_then_declined'
  | 'authenticates_then_insufficient_funds'
  | 'processing_then_succeeds'
  | 'processing_then_fails'
  | 'refund_pending'
  | 'refund_fails_late';

const CODE_OF: Record<Behaviour, string> = {
  succeeds: 'ok',
  card_declined: 'dcl',
  insufficient_funds: 'nsf',
  expired_card: 'exp',
  processing_error: 'err',
  fails_off_session: 'cuf',
  authenticates: 'tds',
  authenticates_then_declined: 'tdsdcl',
  authenticates_then_insufficient_funds: 'tdsnsf',
  processing_then_succeeds: 'prcok',
  processing_then_fails: 'prcfail',
  refund_pending: 'rfpend',
  refund_fails_late: 'rffail',
};
const BEHAVIOUR_OF = Object.fromEntries(Object.entries(CODE_OF).map(([behaviour, code]) => [code, behaviour])) as Record<string, Behaviour>;

/**
 * The test card numbers and what they do: Stripe's own numbers for the same behaviour, so a script written
 * against the sandbox behaves the same in Stripe's test mode. Stripe has no card that answers `processing` (its
 * cards settle at once; bank debits process), so 8807 and 8815 are the sandbox's own. Any other valid number succeeds.
 */
export const SANDBOX_CARDS: Readonly<Record<string, Behaviour>> = {
  '4242424242424242': 'succeeds',
  '5555555555554444': 'succeeds',
  '4000000000000002': 'card_declined',
  '4000000000009995': 'insufficient_funds',
  '4000000000000069': 'expired_card',
  '4000000000000119': 'processing_error',
  '4000000000000341': 'fails_off_session',
  '4000002760003184': 'authenticates',
  '4000000000003220': 'authenticates',
  '4000008400001629': 'authenticates_then_declined',
  '4000008260003178': 'authenticates_then_insufficient_funds',
  '4000000000008807': 'processing_then_succeeds',
  '4000000000008815': 'processing_then_fails',
  '4000000000007726': 'refund_pending',
  '4000000000005126': 'refund_fails_late',
};

/** Test tokens a script passes as `confirmation_token_id` instead of a card (Stripe test mode's names where it has one). */
export const SANDBOX_TOKENS: Readonly<Record<string, { behaviour: Behaviour; brand: string; last4: string }>> = {
  tok_visa: { behaviour: 'succeeds', brand: 'visa', last4: '4242' },
  tok_mastercard: { behaviour: 'succeeds', brand: 'mastercard', last4: '4444' },
  tok_chargeDeclined: { behaviour: 'card_declined', brand: 'visa', last4: '0002' },
  tok_chargeDeclinedInsufficientFunds: { behaviour: 'insufficient_funds', brand: 'visa', last4: '9995' },
  tok_chargeDeclinedExpiredCard: { behaviour: 'expired_card', brand: 'visa', last4: '0069' },
  tok_chargeDeclinedProcessingError: { behaviour: 'processing_error', brand: 'visa', last4: '0119' },
  tok_chargeCustomerFail: { behaviour: 'fails_off_session', brand: 'visa', last4: '0341' },
  tok_threeDSecure2Required: { behaviour: 'authenticates', brand: 'visa', last4: '3220' },
  tok_threeDSecureRequiredChargeDeclined: { behaviour: 'authenticates_then_declined', brand: 'visa', last4: '1629' },
  tok_sandboxProcessing: { behaviour: 'processing_then_succeeds', brand: 'visa', last4: '8807' },
  tok_sandboxProcessingThenFailed: { behaviour: 'processing_then_fails', brand: 'visa', last4: '8815' },
  tok_refundPending: { behaviour: 'refund_pending', brand: 'visa', last4: '7726' },
  tok_refundFailsLate: { behaviour: 'refund_fails_late', brand: 'visa', last4: '5126' },
};

const DECLINE_MESSAGES: Record<string, string> = {
  card_declined: 'Your card was declined.',
  insufficient_funds: 'Your card has insufficient funds.',
  expired_card: 'Your card has expired.',
  processing_error: 'An error occurred while processing your card. Try again in a little bit.',
  authentication_required: 'Your card requires authentication, and you were not there to give it.',
  authentication_failed: 'The authentication of your card was not completed.',
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

/** The method id carries its behaviour, so a method needs no state and survives a daemon restart. */
function parseMethodId(id: string): Behaviour | undefined {
  if (!id.startsWith(METHOD_PREFIX)) return undefined;
  return BEHAVIOUR_OF[id.slice(METHOD_PREFIX.length).split('_')[0]];
}

/**
 * A card saved by a setup keeps what the portal shows of it in its id (brand, last four, expiry), so a setup
 * retrieved after the customer authenticated answers the card without more state: pm_sandbox_{code}_{brand}.{last4}.{mm}.{yyyy}.{random}.
 */
const setupMethodId = (method: SavedPaymentMethod) =>
  `${method.processorMethodId.slice(0, method.processorMethodId.lastIndexOf('_'))}_${method.brand}.${method.last4}.${method.expMonth ?? 0}.${method.expYear ?? 0}.${randomBytes(6).toString('hex')}`;

function methodOfSetup(methodId: string): SavedPaymentMethod {
  const [brand = 'unknown', last4 = '', month = '0', year = '0'] = (methodId.slice(METHOD_PREFIX.length).split('_')[1] ?? '').split('.');
  return { processorMethodId: methodId, processorCustomerId: null, brand, last4, expMonth: Number(month) || null, expYear: Number(year) || null };
}

/** A setup is kept in the sandbox's intent ledger (amount 0), its payment id naming the customer it is for. */
const SETUP_PREFIX = 'seti_sandbox_';
const SETUP_OWNER = 'setup:';
export const isSandboxSetup = (intentId: string) => intentId.startsWith(SETUP_PREFIX);

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 24);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The path of the sandbox's 3-D Secure page for an intent (served by tilld, daemon/pages/sandbox-authenticate). */
export const sandboxAuthenticatePath = (intentId: string) => `/sandbox/authenticate/${encodeURIComponent(intentId)}`;

/** Where an intent stands right after the create, by its card's behaviour and whether the customer is there. */
function firstState(behaviour: Behaviour, offSession: boolean): { status: SandboxIntent['status']; declineCode: string | null } {
  switch (behaviour) {
    case 'card_declined':
    case 'insufficient_funds':
    case 'expired_card':
    case 'processing_error':
      return { status: 'failed', declineCode: behaviour };
    case 'fails_off_session':
      return offSession ? { status: 'failed', declineCode: 'card_declined' } : { status: 'succeeded', declineCode: null };
    case 'authenticates':
    case 'authenticates_then_declined':
    case 'authenticates_then_insufficient_funds':
      return offSession ? { status: 'failed', declineCode: 'authentication_required' } : { status: 'requires_action', declineCode: null };
    case 'processing_then_succeeds':
    case 'processing_then_fails':
      return { status: 'processing', declineCode: null };
    default:
      return { status: 'succeeded', declineCode: null };
  }
}

/** Where an intent ends once authenticated (or processed): paid, or declined after all. */
function finalState(behaviour: Behaviour): { status: 'succeeded' | 'failed'; declineCode: string | null } {
  if (behaviour === 'authenticates_then_declined' || behaviour === 'processing_then_fails') return { status: 'failed', declineCode: 'card_declined' };
  if (behaviour === 'authenticates_then_insufficient_funds') return { status: 'failed', declineCode: 'insufficient_funds' };
  return { status: 'succeeded', declineCode: null };
}

/** The processor-side view of the sandbox, beyond the interface: what its 3-D Secure page needs. */
export interface SandboxProcessor extends PaymentProcessor {
  /** The intent behind the authenticate page, if the sandbox knows it. */
  findIntent(intentId: string): Promise<SandboxIntent | undefined>;
  /**
   * The customer completes (or abandons) 3-D Secure for an intent that requires it. Answers the intent's outcome
   * and Till's payment id, for the page to settle (as a real processor's event would). Idempotent.
   */
  authenticate(intentId: string, complete: boolean): Promise<{ paymentId: string; outcome: IntentOutcome } | undefined>;
}

export interface SandboxOptions {
  /** The database whose sandbox_* tables are the processor's books (written outside any transaction of tilld's). */
  db: Database;
  /** tilld's public URL: the 3-D Secure page lives there. */
  baseUrl?: string;
  now?: () => Date;
  /** How long every processor call takes before and after it is recorded (TILL_SANDBOX_DELAY_MS); 0 by default. */
  delayMs?: number;
}

/**
 * The built-in processor of test mode: Stripe's test cards and tokens, no network. Intents and refunds are kept
 * by idempotency key in its own tables, so a replay answers what the first call did, before or after a restart.
 */
export function createSandboxProcessor(options: SandboxOptions): SandboxProcessor {
  const { db } = options;
  const now = options.now ?? (() => new Date());
  const baseUrl = options.baseUrl ?? 'http://localhost';
  const pause = async () => {
    if (options.delayMs) await sleep(options.delayMs);
  };

  const outcomeOf = (intent: SandboxIntent): IntentOutcome => {
    switch (intent.status) {
      case 'succeeded':
        return { status: 'succeeded', processorIntentId: intent.id, savedMethodId: null };
      case 'requires_action':
        return { status: 'requires_action', processorIntentId: intent.id, redirectUrl: `${baseUrl}${sandboxAuthenticatePath(intent.id)}` };
      case 'processing':
        return { status: 'processing', processorIntentId: intent.id };
      default: {
        const declineCode = intent.declineCode ?? 'card_declined';
        return { status: 'failed', processorIntentId: intent.id, declineCode, message: DECLINE_MESSAGES[declineCode] ?? 'Your card was declined.' };
      }
    }
  };
  const refundOutcomeOf = (refund: SandboxRefund): RefundOutcome =>
    refund.status === 'failed'
      ? { status: 'failed', processorRefundId: refund.id, message: refund.failureReason ?? 'The refund failed.' }
      : { status: refund.status, processorRefundId: refund.id };

  const setupOf = (intent: SandboxIntent): CardSetup => {
    const customerId = intent.paymentId.startsWith(SETUP_OWNER) ? intent.paymentId.slice(SETUP_OWNER.length) : null;
    switch (intent.status) {
      case 'succeeded':
      case 'processing':
        return { status: 'succeeded', setupId: intent.id, customerId, method: methodOfSetup(intent.methodId) };
      case 'requires_action':
        return { status: 'requires_action', setupId: intent.id, customerId, clientSecret: `${intent.id}_secret`, redirectUrl: `${baseUrl}${sandboxAuthenticatePath(intent.id)}` };
      default: {
        const declineCode = intent.declineCode ?? 'card_declined';
        return { status: 'failed', setupId: intent.id, customerId, declineCode, message: DECLINE_MESSAGES[declineCode] ?? 'Your card was declined.' };
      }
    }
  };

  /** Moves an intent from `from` to its final state; answers the intent as it now is. */
  const finish = async (intent: SandboxIntent, to: { status: SandboxIntent['status']; declineCode: string | null }) => {
    await updateSandboxIntent(db, intent.id, intent.status, to);
    return (await findSandboxIntent(db, { id: intent.id }))!;
  };

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
        // Like Stripe's test tokens, a card valid for a few more years.
        expMonth = 12;
        expYear = now().getUTCFullYear() + 3;
      } else {
        card = checkCard(input, now());
        expMonth = input.expMonth;
        expYear = input.expYear < 100 ? 2000 + input.expYear : input.expYear;
      }
      return {
        processorMethodId: `${METHOD_PREFIX}${CODE_OF[card.behaviour]}_${randomBytes(9).toString('hex')}`,
        processorCustomerId: null,
        brand: card.brand,
        last4: card.last4,
        expMonth,
        expYear,
      };
    },

    async setupCard(input, _payer, request): Promise<CardSetup> {
      const method = await this.setupPaymentMethod(input);
      const methodId = setupMethodId(method);
      const behaviour = parseMethodId(methodId) ?? 'succeeds';
      await pause();
      // Saved for off-session charges, as a Stripe SetupIntent: a card that declines is refused, one that wants
      // 3-D Secure asks for it once (on the sandbox's authenticate page); after that it charges like any card.
      const first = firstState(behaviour, false);
      const intent = await recordSandboxIntent(db, {
        id: `${SETUP_PREFIX}${digest(`setup:${request.idempotencyKey}`)}`,
        idempotencyKey: `setup:${request.idempotencyKey}`,
        paymentId: `${SETUP_OWNER}${request.customerId}`,
        methodId,
        amount: 0,
        currency: 'usd',
        offSession: false,
        status: first.status === 'processing' ? 'succeeded' : first.status,
        declineCode: first.declineCode,
        returnUrl: request.returnUrl,
        createdAt: now(),
      });
      return setupOf(intent);
    },

    async retrieveSetup(setupId): Promise<CardSetup | undefined> {
      if (!isSandboxSetup(setupId)) return undefined;
      const intent = await findSandboxIntent(db, { id: setupId });
      return intent ? setupOf(intent) : undefined;
    },

    async detachMethod() {
      // The sandbox keeps no methods: nothing to forget.
    },

    async createIntent(request: IntentRequest): Promise<IntentOutcome> {
      if (!Number.isSafeInteger(request.amount) || request.amount <= 0) throw new Error(`sandbox charge of a non-positive amount: ${request.amount}`);
      const behaviour = parseMethodId(request.processorMethodId);
      if (!behaviour) return { status: 'failed', processorIntentId: null, declineCode: 'processing_error', message: 'This payment method is not known to the sandbox processor.' };
      await pause();
      // A random id, as Stripe's: it names the 3-D Secure page, so it must not be derivable from Till's payment id
      // (a replay with the same key answers the intent recorded first, whatever id it was given).
      const intent = await recordSandboxIntent(db, {
        id: `pi_sandbox_${randomBytes(12).toString('hex')}`,
        idempotencyKey: request.idempotencyKey,
        paymentId: request.paymentId,
        methodId: request.processorMethodId,
        amount: request.amount,
        currency: request.currency,
        offSession: request.offSession,
        ...firstState(behaviour, request.offSession),
        returnUrl: request.returnUrl,
        createdAt: now(),
      });
      await pause();
      return outcomeOf(intent);
    },

    async retrieveIntent(ref): Promise<IntentLookup> {
      await pause();
      let intent = await findSandboxIntent(db, ref.processorIntentId ? { id: ref.processorIntentId } : { idempotencyKey: ref.idempotencyKey });
      if (!intent) return { status: 'not_found' };
      // Processing is over by the time anyone asks again.
      if (intent.status === 'processing') intent = await finish(intent, finalState(parseMethodId(intent.methodId) ?? 'succeeds'));
      return outcomeOf(intent);
    },

    async cancelIntent(ref): Promise<IntentOutcome> {
      const intent = await findSandboxIntent(db, { id: ref.processorIntentId });
      if (!intent) return { status: 'failed', processorIntentId: ref.processorIntentId, declineCode: 'processing_error', message: 'This intent is not known to the sandbox processor.' };
      if (intent.status !== 'requires_action') return outcomeOf(intent);
      return outcomeOf(await finish(intent, { status: 'failed', declineCode: 'authentication_failed' }));
    },

    async findIntent(intentId) {
      return findSandboxIntent(db, { id: intentId });
    },

    async authenticate(intentId, complete) {
      const intent = await findSandboxIntent(db, { id: intentId });
      if (!intent) return undefined;
      if (intent.status !== 'requires_action') return { paymentId: intent.paymentId, outcome: outcomeOf(intent) };
      const to = complete ? finalState(parseMethodId(intent.methodId) ?? 'succeeds') : { status: 'failed' as const, declineCode: 'authentication_failed' };
      return { paymentId: intent.paymentId, outcome: outcomeOf(await finish(intent, to)) };
    },

    async refund(request: RefundRequest): Promise<RefundOutcome> {
      await pause();
      const known = await findSandboxRefund(db, request.idempotencyKey);
      if (known) return refundOutcomeOf(await recordSandboxRefund(db, known));
      const intent = await findSandboxIntent(db, { id: request.processorIntentId });
      if (!intent || intent.status !== 'succeeded') return { status: 'failed', processorRefundId: null, message: 'This payment is not known to the sandbox processor.' };
      if (intent.currency !== request.currency) return { status: 'failed', processorRefundId: null, message: `The payment was in ${intent.currency}, not ${request.currency}.` };
      const left = intent.amount - (await refundedOfSandboxIntent(db, intent.id));
      if (request.amount <= 0 || request.amount > left) return { status: 'failed', processorRefundId: null, message: `Cannot refund ${request.amount}: ${left} of the payment is left to refund.` };
      const behaviour = parseMethodId(intent.methodId);
      const refund = await recordSandboxRefund(db, {
        id: `re_sandbox_${digest(`refund:${request.idempotencyKey}`)}`,
        idempotencyKey: request.idempotencyKey,
        intentId: intent.id,
        amount: request.amount,
        // Stripe's 5126 reports its refund succeeded and fails it later; the sandbox reports it pending until then.
        status: behaviour === 'refund_pending' || behaviour === 'refund_fails_late' ? 'pending' : 'succeeded',
        failureReason: null,
        createdAt: now(),
      });
      await pause();
      return refundOutcomeOf(refund);
    },

    async retrieveRefund(ref): Promise<RefundLookup> {
      await pause();
      const refund = await findSandboxRefund(db, ref.idempotencyKey);
      if (!refund) return { status: 'not_found' };
      if (refund.status !== 'pending') return refundOutcomeOf(refund);
      const intent = await findSandboxIntent(db, { id: refund.intentId });
      const fails = intent && parseMethodId(intent.methodId) === 'refund_fails_late';
      await updateSandboxRefund(db, refund.id, 'pending', fails ? { status: 'failed', failureReason: 'expired_or_canceled_card' } : { status: 'succeeded', failureReason: null });
      return refundOutcomeOf((await findSandboxRefund(db, ref.idempotencyKey))!);
    },
  };
}
