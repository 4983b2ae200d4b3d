import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { IntentOutcome, IntentRequest, PaymentProcessor } from '../../payments/processor.js';
import type { Payment, PaymentSettlement } from '../../payments/repository.js';

/** Asks the processor about an intent the daemon has no answer for (crashed, timed out, waiting for the customer or the bank). */
export const PAYMENT_SETTLE_JOB = 'payment.settle';
/** Gives back a captured payment that has nothing left to pay for (its subscription ended, its change went stale). */
export const PAYMENT_GIVE_BACK_JOB = 'payment.give_back';

/** How long an intent waits for its live answer before the settle job asks the processor (on the organization's clock). */
export const PAYMENT_SETTLE_DELAY_MS = 60_000;
/** How often a `processing` intent is asked about again when no processor event settles it first. */
export const PAYMENT_PROCESSING_POLL_MS = 60_000;
/** How long the customer has to authenticate (3-D Secure) before the intent is abandoned and the checkout reopened. */
export const PAYMENT_ACTION_WINDOW_MS = 30 * 60_000;

/** What settling a payment needs: the database, the processor, the public URL and a clock (see each function: real or the organization's). */
export interface PaymentDeps {
  db: Database;
  clock: Clock;
  payments: PaymentProcessor;
  /** Stripe when configured: the processor of organizations not marked sandbox (core/payments/select.ts). */
  livePayments?: PaymentProcessor | null;
  baseUrl: string;
}

/** The request an intent row stands for: the same on the first call, a retry and the settle job's replay. */
export function intentRequest(payment: Payment): IntentRequest {
  return {
    idempotencyKey: payment.idempotencyKey,
    paymentId: payment.id,
    processorMethodId: payment.processorMethodId ?? '',
    processorCustomerId: payment.processorCustomerId,
    amount: payment.amount,
    currency: payment.currency,
    description: payment.description,
    offSession: payment.offSession,
    returnUrl: payment.returnUrl,
  };
}

/** What a processor's answer writes on the row. */
export function settlementOf(payment: Payment, outcome: IntentOutcome, now: Date): PaymentSettlement {
  const processorPaymentId = outcome.processorIntentId ?? payment.processorPaymentId;
  const base = { processorPaymentId, savedMethodId: payment.savedMethodId, redirectUrl: null, declineCode: null, declineMessage: null, modifiedAt: now };
  switch (outcome.status) {
    case 'succeeded':
      return { ...base, status: 'succeeded', savedMethodId: outcome.savedMethodId };
    case 'failed':
      return { ...base, status: 'failed', declineCode: outcome.declineCode, declineMessage: outcome.message };
    case 'requires_action':
      return { ...base, status: 'requires_action', redirectUrl: outcome.redirectUrl };
    case 'processing':
      return { ...base, status: 'processing' };
  }
}
