/**
 * What Till asks of a payment processor. The domains (checkouts, subscriptions, refunds) only speak this
 * interface, so a real processor such as Stripe is an adapter beside the sandbox, not a change to them.
 * Amounts are integer minor units of `currency` (lower-case ISO 4217).
 *
 * Every charge is a payment intent. Before any processor call, Till writes the intent as a row of `payments`
 * (status `created`) in the same transaction as the claim it pays for (a checkout confirmed, a renewal due, a plan
 * change, a dunning retry), with an idempotency key derived from that row (`till_<payment id>`). Then:
 *
 *  1. `createIntent` is called with that key. The same key must never make a second charge at the processor: a
 *     retry with the same key (the request again after a timeout, or the settle job after a crash) answers the
 *     intent the first call made. The processor's answer settles the row (core/billing/payments/settle.ts).
 *  2. If the answer never came (the daemon died, the network broke), the settle job asks `retrieveIntent` about
 *     the key and the processor's intent id (when the row has one). `not_found` means the processor never got
 *     the create: the job replays `createIntent` with the same key and the same request, which is safe because of
 *     1. Whatever it learns settles the row, exactly as a live answer would.
 *  3. An intent answered `requires_action` (3-D Secure) or `processing` is settled later: by a processor event
 *     (webhook route → `settleIntentFromProcessor`), by the customer coming back to the hosted checkout, or by the
 *     settle job asking `retrieveIntent` again. An on-session intent that still requires action when its checkout
 *     gives up on it is abandoned with `cancelIntent`.
 *
 * Card data never reaches tilld with a real processor: the hosted checkout collects it with the processor's own
 * JavaScript, which hands tilld a token (Stripe: a ConfirmationToken `ctoken_…`, or a PaymentMethod `pm_…`), passed
 * as `{ kind: 'token' }`. Only the sandbox takes `{ kind: 'card' }` (test card numbers typed into the form) and its
 * `tok_…` test tokens; a real adapter refuses `kind: 'card'` with CoreError('invalid', 'CARD_DATA_NOT_ACCEPTED').
 */

/** What a customer handed over at checkout: a card typed into the sandbox's form, or a token from the processor. */
export type PaymentMethodInput =
  | { kind: 'card'; number: string; expMonth: number; expYear: number; cvc: string }
  | { kind: 'token'; token: string };

/** Who is paying, for a processor that keeps customers of its own (Stripe). */
export interface PayerDetails {
  email: string;
  name: string | null;
  /** A customer id this processor gave earlier (from a saved method), to attach the new method to. */
  processorCustomerId: string | null;
}

/**
 * A method the processor checked, to charge now and (saved on the customer) later. Only brand, last four and the
 * expiry are ever kept by Till.
 */
export interface SavedPaymentMethod {
  /**
   * What `createIntent` charges: a saved method (sandbox `pm_sandbox_…`, Stripe `pm_…`), or for a real processor's
   * first on-session charge the token itself (Stripe `ctoken_…`); the intent's answer then names the method saved
   * for off-session charges (`IntentOutcome.savedMethodId`).
   */
  processorMethodId: string;
  /** The processor's own customer the method belongs to (Stripe `cus_…`); null for the sandbox. */
  processorCustomerId: string | null;
  brand: string;
  last4: string;
  expMonth: number | null;
  expYear: number | null;
}

/**
 * Why a charge was declined. The sandbox answers the four first; an adapter passes the processor's own decline
 * code through (Stripe's `decline_code`, else its error `code`), lower snake case.
 */
export type DeclineCode = 'card_declined' | 'insufficient_funds' | 'expired_card' | 'processing_error' | (string & {});

/** One charge Till asks for. Everything in it is stored on the payment row, so the settle job can replay it. */
export interface IntentRequest {
  /** `till_<payment id>`: unique per intent row, the same on every retry and replay. */
  idempotencyKey: string;
  /** Till's payment id, for the processor to echo back in its events (Stripe: `metadata.till_payment_id`). */
  paymentId: string;
  processorMethodId: string;
  processorCustomerId: string | null;
  amount: number;
  currency: string;
  description: string;
  /** True for renewals, dunning retries and invoiced plan changes: nobody is there to authenticate. */
  offSession: boolean;
  /**
   * On-session only: where the customer lands after authenticating at the processor (the hosted checkout, which
   * then waits for the result). Null off-session.
   */
  returnUrl: string | null;
}

/**
 * A processor's answer about an intent. `processorIntentId` is the processor's id for it (Stripe `pi_…`); refunds
 * go through it.
 *  - succeeded: captured. `savedMethodId` is the method to keep for off-session charges when the charge was made
 *    from a token (null when the request already named a saved method).
 *  - failed: declined or abandoned; nothing was captured and nothing will be.
 *  - requires_action: the customer must authenticate (3-D Secure) at `redirectUrl`, which comes back to the
 *    request's `returnUrl`. Off-session, the adapter answers `failed` with `authentication_required` instead
 *    (nobody can act); Till then treats it as a decline and mails the customer through dunning.
 *  - processing: accepted, the result comes later (a processor event, or `retrieveIntent`).
 */
export type IntentOutcome =
  | { status: 'succeeded'; processorIntentId: string; savedMethodId: string | null }
  | { status: 'failed'; processorIntentId: string | null; declineCode: DeclineCode; message: string }
  | { status: 'requires_action'; processorIntentId: string; redirectUrl: string }
  | { status: 'processing'; processorIntentId: string };

/** What the processor knows of an intent Till asks about: its outcome, or nothing (the create never arrived). */
export type IntentLookup = IntentOutcome | { status: 'not_found' };

/**
 * A processor's answer about a refund. `pending`: accepted, settled later by a processor event or
 * `retrieveRefund` (it may still fail: the money then goes back to the order's refundable amount).
 */
export type RefundOutcome =
  | { status: 'succeeded'; processorRefundId: string }
  | { status: 'pending'; processorRefundId: string }
  | { status: 'failed'; processorRefundId: string | null; message: string };

export type RefundLookup = RefundOutcome | { status: 'not_found' };

export interface RefundRequest {
  /** The intent that captured the money (`IntentOutcome.processorIntentId`). */
  processorIntentId: string;
  amount: number;
  currency: string;
  /** Till's refund id: the same on every retry, so a refund is never made twice. */
  idempotencyKey: string;
  /** Till's refund id, for the processor to echo back in its events (Stripe: `metadata.till_refund_id`). */
  refundId: string;
}

/**
 * The answer to `saveForLater`: the method to keep for off-session charges, or why the processor would not save it.
 * `requires_action`: the card wants 3-D Secure to be saved, which a checkout that charges nothing cannot yet send
 * the customer through; it is refused like a decline (declineCode `authentication_required`).
 */
export type SetupOutcome =
  | { status: 'succeeded'; method: SavedPaymentMethod }
  | { status: 'failed'; declineCode: DeclineCode; message: string };

/**
 * A card saved outside any charge (the portal's "add a card"; Stripe's SetupIntent): saved at once, waiting for the
 * customer to authenticate (3-D Secure at `redirectUrl`, or with Stripe.js and `clientSecret`), or refused.
 * `customerId` is Till's customer the setup was made for, as the processor keeps it (Stripe: the SetupIntent's
 * `metadata.customer_id`), so a setup id from one customer confirms nothing for another.
 */
export type CardSetup =
  | { status: 'succeeded'; setupId: string; customerId: string | null; method: SavedPaymentMethod }
  | { status: 'requires_action'; setupId: string; customerId: string | null; clientSecret: string; redirectUrl: string | null }
  | { status: 'failed'; setupId: string | null; customerId: string | null; declineCode: DeclineCode; message: string };

export interface CardSetupRequest {
  /** Till's key: the same request again answers the same setup. */
  idempotencyKey: string;
  /** Where the customer lands after authenticating (the processor adds its own query parameters). */
  returnUrl: string;
  /** Till's ids, echoed in the processor's records (Polar's organization_id and customer_id metadata). */
  organizationId: string;
  customerId: string;
}

export interface PaymentProcessor {
  /** Stored beside every payment, so a refund or a later question goes back to the processor that charged. */
  readonly name: string;
  /**
   * Checks a method before anything is claimed, and prepares it for charging. Throws CoreError('invalid', …) with
   * field-level details for input the customer must correct (a malformed card, an unknown or expired token); a
   * method that is valid but declines is a failed intent, not an error here.
   */
  setupPaymentMethod(input: PaymentMethodInput, payer?: PayerDetails): Promise<SavedPaymentMethod>;
  /**
   * For a checkout that charges nothing now but must keep the card (a trial): makes the method set up by
   * `setupPaymentMethod` chargeable off-session without charging it. Stripe confirms a SetupIntent (usage
   * `off_session`) with the ConfirmationToken, which attaches the PaymentMethod to the customer; its `pm_…` is what
   * renewals charge. Idempotent on `idempotencyKey`. Absent: the method is already reusable (the sandbox).
   */
  saveForLater?(method: SavedPaymentMethod, request: { idempotencyKey: string; description: string }): Promise<SetupOutcome>;
  /**
   * Creates and confirms an intent for `amount`. Idempotent on `idempotencyKey` (see the file's comment). Throws
   * only when the processor could not be asked or answered nonsense (network, 5xx): the row then stays `created`
   * and the settle job finds it.
   */
  createIntent(request: IntentRequest): Promise<IntentOutcome>;
  /** What the processor knows of an intent, by Till's key and, when Till has it, the processor's intent id. */
  retrieveIntent(ref: { idempotencyKey: string; processorIntentId: string | null; paymentId: string }): Promise<IntentLookup>;
  /**
   * Abandons an intent still waiting for the customer (requires_action). Answers its final state, which is
   * `succeeded` when the customer completed it meanwhile (then nothing was canceled).
   */
  cancelIntent(ref: { processorIntentId: string }): Promise<IntentOutcome>;
  /**
   * Saves a card for off-session charges without charging it (Stripe: a SetupIntent with usage off_session,
   * confirmed with the ConfirmationToken, attached to the payer's processor customer). Throws CoreError('invalid')
   * for a token or card the customer must correct, as setupPaymentMethod.
   */
  setupCard(input: PaymentMethodInput, payer: PayerDetails, request: CardSetupRequest): Promise<CardSetup>;
  /** A setup as the processor has it now (after the customer authenticated, or gave up); undefined when unknown. */
  retrieveSetup(setupId: string): Promise<CardSetup | undefined>;
  /** Forgets a saved method at the processor (Stripe: detaches the PaymentMethod from its customer). */
  detachMethod(method: { processorMethodId: string }): Promise<void>;
  /** Returns part or all of a captured intent. The same idempotencyKey never refunds twice. */
  refund(request: RefundRequest): Promise<RefundOutcome>;
  /** What the processor knows of a refund (one left `pending`, or whose answer never came). */
  retrieveRefund(ref: { idempotencyKey: string; processorRefundId: string | null; refundId: string }): Promise<RefundLookup>;
}
