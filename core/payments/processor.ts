/**
 * What Till asks of a payment processor. The domains (checkouts, subscriptions, refunds) only speak this
 * interface, so a real processor such as Stripe is an adapter beside the sandbox, not a change to them.
 * Amounts are integer minor units of `currency` (lower-case ISO 4217).
 */

/** What a customer handed over at checkout: a card typed into the hosted form, or a processor test token. */
export type PaymentMethodInput =
  | { kind: 'card'; number: string; expMonth: number; expYear: number; cvc: string }
  | { kind: 'token'; token: string };

/** A method saved with the processor for later charges (renewals); only brand and last four are ever kept. */
export interface SavedPaymentMethod {
  processorMethodId: string;
  brand: string;
  last4: string;
  expMonth: number | null;
  expYear: number | null;
}

export type DeclineCode = 'card_declined' | 'insufficient_funds' | 'expired_card' | 'processing_error';

export type ChargeOutcome =
  | { status: 'succeeded'; processorPaymentId: string }
  | { status: 'failed'; declineCode: DeclineCode; message: string };

export type RefundOutcome =
  | { status: 'succeeded'; processorRefundId: string }
  | { status: 'failed'; message: string };

export interface PaymentProcessor {
  /** Stored beside every payment, so a refund goes back through the processor that charged. */
  readonly name: string;
  /**
   * Checks and saves a method for charges now and later. Throws CoreError('invalid', …) for a malformed card
   * (bad number, past expiry); a card that is valid but declines is a failed charge, not an error here.
   */
  setupPaymentMethod(input: PaymentMethodInput): Promise<SavedPaymentMethod>;
  /**
   * Authorizes and captures `amount`. `offSession` is true for renewals and dunning retries (no customer present).
   * The same idempotencyKey never charges twice.
   */
  charge(input: { processorMethodId: string; amount: number; currency: string; idempotencyKey: string; description: string; offSession: boolean }): Promise<ChargeOutcome>;
  /** Returns part or all of a captured payment. The same idempotencyKey never refunds twice. */
  refund(input: { processorPaymentId: string; amount: number; currency: string; idempotencyKey: string }): Promise<RefundOutcome>;
}
