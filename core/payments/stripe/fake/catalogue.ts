/**
 * Stripe's documented test payment methods and what each does, keyed by the `pm_card_…` shortcut and by the card
 * number (or IBAN) Stripe.js would tokenize. The fake gives each the behaviour Stripe's test mode gives it.
 */
export type Behaviour =
  | 'succeeds'
  /** Declines every charge, and refuses to be attached or set up (Stripe checks the card on attach). */
  | 'declines'
  /** Attaches and sets up fine; every charge declines (4000 0000 0000 0341). */
  | 'declines_after_attach'
  /** 3-D Secure on every payment; off-session charges fail with authentication_required (4000 0027 6000 3184). */
  | 'always_authenticate'
  /** 3-D Secure on payments the customer is present for (4000 0000 0000 3220); off-session ones need it too. */
  | 'authenticate_on_session'
  /** 3-D Secure once when set up for future use; later off-session charges succeed (4000 0025 0000 3155). */
  | 'authenticate_on_setup'
  /** The charge succeeds, then the cardholder disputes it as fraudulent (4000 0000 0000 0259). */
  | 'disputed'
  /** The charge succeeds; a refund of it starts `succeeded` and later fails (4000 0000 0000 5126). */
  | 'refund_fails'
  /** A bank debit: `processing`, then succeeds. */
  | 'processing_succeeds'
  /** A bank debit: `processing`, then fails. */
  | 'processing_fails';

export interface DeclineReason {
  code: string;
  declineCode: string;
  message: string;
}

export interface TestMethod {
  type: 'card' | 'sepa_debit';
  brand: string;
  last4: string;
  country: string;
  funding: string;
  behaviour: Behaviour;
  decline?: DeclineReason;
}

const DECLINED: DeclineReason = { code: 'card_declined', declineCode: 'generic_decline', message: 'Your card was declined.' };
const INSUFFICIENT: DeclineReason = { code: 'card_declined', declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.' };
const EXPIRED: DeclineReason = { code: 'expired_card', declineCode: 'expired_card', message: 'Your card has expired.' };
const PROCESSING_ERROR: DeclineReason = {
  code: 'processing_error',
  declineCode: 'processing_error',
  message: 'An error occurred while processing your card. Try again in a little bit.',
};

const card = (brand: string, last4: string, behaviour: Behaviour, decline?: DeclineReason): TestMethod => ({
  type: 'card',
  brand,
  last4,
  country: 'US',
  funding: 'credit',
  behaviour,
  ...(decline ? { decline } : {}),
});

/** Card numbers Stripe's test mode knows; any other number that passes Luhn succeeds. */
export const TEST_CARDS: Readonly<Record<string, TestMethod>> = {
  '4242424242424242': card('visa', '4242', 'succeeds'),
  '5555555555554444': card('mastercard', '4444', 'succeeds'),
  '4000000000000002': card('visa', '0002', 'declines', DECLINED),
  '4000000000009995': card('visa', '9995', 'declines', INSUFFICIENT),
  '4000000000000069': card('visa', '0069', 'declines', EXPIRED),
  '4000000000000119': card('visa', '0119', 'declines', PROCESSING_ERROR),
  '4000000000000341': card('visa', '0341', 'declines_after_attach', DECLINED),
  '4000002760003184': card('visa', '3184', 'always_authenticate'),
  '4000000000003220': card('visa', '3220', 'authenticate_on_session'),
  '4000002500003155': card('visa', '3155', 'authenticate_on_setup'),
  '4000000000000259': card('visa', '0259', 'disputed'),
  '4000000000005126': card('visa', '5126', 'refund_fails'),
};

/** Stripe's `pm_card_…` shortcuts: using one makes a fresh PaymentMethod with that card. */
export const TEST_METHOD_IDS: Readonly<Record<string, string>> = {
  pm_card_visa: '4242424242424242',
  pm_card_mastercard: '5555555555554444',
  pm_card_chargeDeclined: '4000000000000002',
  pm_card_chargeDeclinedInsufficientFunds: '4000000000009995',
  pm_card_chargeDeclinedExpiredCard: '4000000000000069',
  pm_card_chargeDeclinedProcessingError: '4000000000000119',
  pm_card_chargeCustomerFail: '4000000000000341',
  pm_card_authenticationRequired: '4000002760003184',
  pm_card_threeDSecure2Required: '4000000000003220',
  pm_card_authenticationRequiredOnSetup: '4000002500003155',
  pm_card_createDispute: '4000000000000259',
  pm_card_refundFail: '4000000000005126',
};

/** SEPA test IBANs: debits stay `processing` a while, then succeed or fail. */
export const TEST_IBANS: Readonly<Record<string, TestMethod>> = {
  AT321904300235473204: { type: 'sepa_debit', brand: 'sepa_debit', last4: '3204', country: 'AT', funding: 'debit', behaviour: 'processing_succeeds' },
  AT861904300235473202: {
    type: 'sepa_debit',
    brand: 'sepa_debit',
    last4: '3202',
    country: 'AT',
    funding: 'debit',
    behaviour: 'processing_fails',
    decline: { code: 'insufficient_funds', declineCode: 'insufficient_funds', message: 'The customer\'s account has insufficient funds to cover this payment.' },
  },
};

/** The card network of a number, by its leading digits. */
function brandOf(digits: string): string {
  if (/^4/.test(digits)) return 'visa';
  if (/^(5[1-5]|2[2-7])/.test(digits)) return 'mastercard';
  if (/^3[47]/.test(digits)) return 'amex';
  return 'unknown';
}

/** What a raw card number does, or undefined when it is not a card number at all. */
export function methodOfCardNumber(number: string): TestMethod | undefined {
  const digits = number.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits)) return undefined;
  return TEST_CARDS[digits] ?? card(brandOf(digits), digits.slice(-4), 'succeeds');
}
