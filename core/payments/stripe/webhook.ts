import Stripe from 'stripe';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { recordProcessorDispute, type ProcessorDispute } from '../../billing/disputes/service.js';
import type { DisputeStatus } from '../../billing/disputes/schema.js';
import { settleIntentFromProcessor } from '../../billing/payments/settle.js';
import { settleRefundFromProcessor } from '../../billing/refunds/service.js';
import type { PaymentProcessor } from '../processor.js';
import { markStripeEventProcessed, receiveStripeEvent } from './events-repository.js';
import { outcomeOfPaymentIntent, outcomeOfRefund } from './processor.js';

/** Stripe's signature tolerance: an event signed more than five minutes ago is refused (a replay). */
export const STRIPE_TOLERANCE_SECONDS = 300;

export interface StripeWebhookDeps {
  db: Database;
  /** Real time: Stripe's events happen in real time, whatever an organization's test clock says. */
  clock: Clock;
  baseUrl: string;
  /** The Stripe processor, which settled intents are asked again through. */
  payments: PaymentProcessor;
  stripe: Stripe;
  webhookSecret: string;
}

/** Stripe's dispute status in Polar's words. */
export function disputeStatusOf(status: Stripe.Dispute.Status | string): DisputeStatus {
  switch (status) {
    case 'warning_needs_response':
    case 'warning_under_review':
      return 'early_warning';
    case 'warning_closed':
    case 'prevented':
      return 'prevented';
    case 'won':
    case 'lost':
    case 'under_review':
    case 'needs_response':
      return status as DisputeStatus;
    default:
      return 'needs_response';
  }
}

/** A Stripe dispute as Till records it. */
export function processorDisputeOf(dispute: Stripe.Dispute): ProcessorDispute {
  const intent = typeof dispute.payment_intent === 'string' ? dispute.payment_intent : (dispute.payment_intent?.id ?? '');
  const due = dispute.evidence_details?.due_by;
  return {
    processor: 'stripe',
    processorDisputeId: dispute.id,
    processorIntentId: intent,
    status: disputeStatusOf(dispute.status),
    reason: dispute.reason ?? null,
    amount: dispute.amount,
    currency: dispute.currency,
    evidenceDueBy: due ? new Date(due * 1000) : null,
    pastDue: dispute.evidence_details?.past_due ?? false,
  };
}

const idOf = (object: unknown) => (object as { id?: unknown }).id as string;

/**
 * Acts on one event. The event only says *what* changed: the object is read afresh from Stripe, so events that
 * arrive late or out of order settle from Stripe's current state, never from an older snapshot.
 */
async function act(deps: StripeWebhookDeps, event: Stripe.Event): Promise<void> {
  const { stripe } = deps;
  const settleDeps = { db: deps.db, clock: deps.clock, payments: deps.payments, baseUrl: deps.baseUrl };
  if (event.type.startsWith('payment_intent.')) {
    const intent = await stripe.paymentIntents.retrieve(idOf(event.data.object));
    await settleIntentFromProcessor(settleDeps, { processor: 'stripe', processorIntentId: intent.id, paymentId: intent.metadata?.till_payment_id ?? null, outcome: outcomeOfPaymentIntent(intent) });
    return;
  }
  if (event.type.startsWith('refund.') || event.type === 'charge.refund.updated') {
    const refund = await stripe.refunds.retrieve(idOf(event.data.object));
    await settleRefundFromProcessor(settleDeps, { processor: 'stripe', processorRefundId: refund.id, refundId: refund.metadata?.till_refund_id ?? null, outcome: outcomeOfRefund(refund) });
    return;
  }
  if (event.type.startsWith('charge.dispute.')) {
    const dispute = await stripe.disputes.retrieve(idOf(event.data.object));
    await recordProcessorDispute(settleDeps, processorDisputeOf(dispute));
  }
  // Anything else (customer.*, charge.succeeded, …) tells Till nothing it does not learn from the events above.
}

/**
 * Handles one delivery to the Stripe webhook endpoint: checks Stripe's signature over the raw body (300 s
 * tolerance), acts once per event id, and answers whether the event had been processed already. A failure while
 * acting leaves the event unprocessed, so Stripe's retry acts again (every settle step is guarded).
 */
export async function handleStripeWebhook(deps: StripeWebhookDeps, rawBody: Buffer, signature: string | undefined): Promise<{ duplicate: boolean; type: string }> {
  let event: Stripe.Event;
  try {
    event = deps.stripe.webhooks.constructEvent(rawBody, signature ?? '', deps.webhookSecret, STRIPE_TOLERANCE_SECONDS);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) throw new CoreError('bad_request', 'INVALID_STRIPE_SIGNATURE', error.message);
    throw new CoreError('bad_request', 'INVALID_STRIPE_EVENT', 'The body is not a Stripe event');
  }
  const received = await receiveStripeEvent(deps.db, event, deps.clock.now());
  if (received.processed) return { duplicate: true, type: event.type };
  await act(deps, event);
  await markStripeEventProcessed(deps.db, event.id, deps.clock.now());
  return { duplicate: false, type: event.type };
}
