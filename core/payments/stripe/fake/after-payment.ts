import type { FakeContext } from './context.js';
import { invalidParam, missing, unexpectedState } from './errors.js';
import { metadataOf, obj, str, bool, type FormObject } from './form.js';
import { stripeId, unixSeconds } from './ids.js';
import { behaviourOf, } from './methods.js';
import { getPaymentIntent } from './intents.js';
import type { Charge, Dispute, Refund } from './state.js';

const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'];

function getCharge(ctx: FakeContext, id: string, param = 'charge'): Charge {
  const charge = ctx.state.charges.get(id);
  if (!charge) throw missing('charge', id, param);
  return charge;
}

export const retrieveCharge = (ctx: FakeContext, id: string) => getCharge(ctx, id, 'id');

const money = (amount: number, currency: string) => `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;

/** Returns part or all of a captured payment, never more than what is left of it. */
export function createRefund(ctx: FakeContext, form: FormObject): Refund {
  const intentId = str(form, 'payment_intent');
  const chargeId = str(form, 'charge');
  if (!intentId && !chargeId) throw invalidParam('payment_intent', 'One of the following params should be provided for this request: payment_intent or charge.', 'parameter_missing');
  let charge: Charge;
  if (intentId) {
    const intent = getPaymentIntent(ctx, intentId);
    if (intent.status !== 'succeeded' || !intent.latest_charge) {
      throw unexpectedState('charge_not_refundable', `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`);
    }
    charge = getCharge(ctx, intent.latest_charge);
  } else {
    charge = getCharge(ctx, chargeId!);
  }
  if (charge.disputed) {
    const dispute = [...ctx.state.disputes.values()].find((item) => item.charge === charge.id);
    if (dispute && dispute.status !== 'won') throw unexpectedState('charge_disputed', `Charge ${charge.id} has been charged back; cannot issue a refund.`);
  }
  const left = charge.amount_captured - charge.amount_refunded;
  if (left <= 0) throw unexpectedState('charge_already_refunded', `Charge ${charge.id} has already been refunded.`);
  const rawAmount = str(form, 'amount');
  const amount = rawAmount === undefined ? left : Number(rawAmount);
  if (rawAmount !== undefined && (!/^\d+$/.test(rawAmount) || amount < 1)) throw invalidParam('amount', `Invalid integer: ${rawAmount}`, 'parameter_invalid_integer');
  if (amount > left) {
    throw invalidParam('amount', `Refund amount (${money(amount, charge.currency)}) is greater than unrefunded amount on charge (${money(left, charge.currency)})`, 'amount_too_large');
  }
  const reason = str(form, 'reason');
  if (reason !== undefined && !REFUND_REASONS.includes(reason)) throw invalidParam('reason', `Invalid reason: must be one of ${REFUND_REASONS.join(', ')}`, 'parameter_invalid_string');
  const method = behaviourOf(ctx, charge.payment_method);
  const refund: Refund = {
    id: stripeId('re'),
    object: 'refund',
    amount,
    charge: charge.id,
    created: unixSeconds(ctx.now()),
    currency: charge.currency,
    failure_reason: null,
    metadata: metadataOf(form),
    payment_intent: charge.payment_intent,
    reason: reason ?? null,
    // Card refunds succeed at once; bank debits are returned over days.
    status: method.type === 'card' ? 'succeeded' : 'pending',
  };
  ctx.state.refunds.set(refund.id, refund);
  const refunded = { ...charge, amount_refunded: charge.amount_refunded + amount, refunded: charge.amount_refunded + amount === charge.amount_captured };
  ctx.state.charges.set(charge.id, refunded);
  ctx.emit('refund.created', refund);
  ctx.emit('charge.refunded', refunded);
  if (method.behaviour === 'refund_fails') ctx.later(() => failRefund(ctx, refund.id));
  else if (refund.status === 'pending') ctx.later(() => finishRefund(ctx, refund.id));
  return refund;
}

function finishRefund(ctx: FakeContext, id: string): void {
  const refund = ctx.state.refunds.get(id);
  if (!refund || refund.status !== 'pending') return;
  const done: Refund = { ...refund, status: 'succeeded' };
  ctx.state.refunds.set(id, done);
  ctx.emit('refund.updated', done, { status: refund.status });
  ctx.emit('charge.refund.updated', done, { status: refund.status });
}

/** A refund the card's bank sends back: the amount is the merchant's again, and can be refunded again. */
function failRefund(ctx: FakeContext, id: string): void {
  const refund = ctx.state.refunds.get(id);
  if (!refund || (refund.status !== 'succeeded' && refund.status !== 'pending')) return;
  const failed: Refund = { ...refund, status: 'failed', failure_reason: 'expired_or_canceled_card' };
  ctx.state.refunds.set(id, failed);
  const charge = getCharge(ctx, refund.charge);
  ctx.state.charges.set(charge.id, { ...charge, amount_refunded: charge.amount_refunded - refund.amount, refunded: false });
  ctx.emit('refund.updated', failed, { status: refund.status, failure_reason: null });
  ctx.emit('charge.refund.updated', failed, { status: refund.status, failure_reason: null });
  ctx.emit('refund.failed', failed);
}

export function getRefund(ctx: FakeContext, id: string): Refund {
  const refund = ctx.state.refunds.get(id);
  if (!refund) throw missing('refund', id, 'refund');
  return refund;
}

export function listRefunds(ctx: FakeContext, query: URLSearchParams): Refund[] {
  const intent = query.get('payment_intent');
  const charge = query.get('charge');
  return [...ctx.state.refunds.values()]
    .filter((refund) => (!intent || refund.payment_intent === intent) && (!charge || refund.charge === charge))
    .sort((a, b) => b.created - a.created);
}

export function getDispute(ctx: FakeContext, id: string): Dispute {
  const dispute = ctx.state.disputes.get(id);
  if (!dispute) throw missing('dispute', id, 'dispute');
  return dispute;
}

export function listDisputes(ctx: FakeContext, query: URLSearchParams): Dispute[] {
  const intent = query.get('payment_intent');
  const charge = query.get('charge');
  return [...ctx.state.disputes.values()]
    .filter((dispute) => (!intent || dispute.payment_intent === intent) && (!charge || dispute.charge === charge))
    .sort((a, b) => b.created - a.created);
}

const isClosed = (dispute: Dispute) => dispute.status === 'won' || dispute.status === 'lost' || dispute.status === 'warning_closed';

/**
 * Updates a dispute's evidence. Submitted evidence reading `winning_evidence` or `losing_evidence` decides it, as in
 * Stripe's test mode: under review now, closed some time later.
 */
export function updateDispute(ctx: FakeContext, id: string, form: FormObject): Dispute {
  const dispute = getDispute(ctx, id);
  if (isClosed(dispute)) throw unexpectedState('dispute_already_closed', `This dispute is already closed (${dispute.status}).`);
  const evidence = obj(form, 'evidence');
  const submit = bool(form, 'submit') ?? true;
  const text = str(evidence, 'uncategorized_text') ?? dispute.evidence.uncategorized_text;
  const updated: Dispute = {
    ...dispute,
    metadata: metadataOf(form, dispute.metadata),
    evidence: {
      uncategorized_text: text,
      customer_email_address: str(evidence, 'customer_email_address') ?? dispute.evidence.customer_email_address,
      product_description: str(evidence, 'product_description') ?? dispute.evidence.product_description,
    },
    evidence_details: {
      ...dispute.evidence_details,
      has_evidence: true,
      submission_count: dispute.evidence_details.submission_count + (submit ? 1 : 0),
    },
    status: submit ? 'under_review' : dispute.status,
  };
  ctx.state.disputes.set(id, updated);
  ctx.emit('charge.dispute.updated', updated, { status: dispute.status });
  if (submit && (text === 'winning_evidence' || text === 'losing_evidence')) {
    ctx.later(() => closeDispute(ctx, id, text === 'winning_evidence' ? 'won' : 'lost'));
  }
  return updated;
}

function closeDispute(ctx: FakeContext, id: string, status: 'won' | 'lost'): Dispute {
  const dispute = getDispute(ctx, id);
  if (isClosed(dispute)) return dispute;
  const closed: Dispute = { ...dispute, status };
  ctx.state.disputes.set(id, closed);
  ctx.emit('charge.dispute.closed', closed, { status: dispute.status });
  if (status === 'won') ctx.emit('charge.dispute.funds_reinstated', closed);
  return closed;
}

/** Accepting a dispute (`POST /v1/disputes/:id/close`) concedes it: lost at once. */
export function acceptDispute(ctx: FakeContext, id: string): Dispute {
  const dispute = getDispute(ctx, id);
  if (isClosed(dispute)) throw unexpectedState('dispute_already_closed', `This dispute is already closed (${dispute.status}).`);
  return closeDispute(ctx, id, 'lost');
}
