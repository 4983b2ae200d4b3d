import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { cancelJob, scheduleJob, type JobHandlers } from '../../jobs/jobs.js';
import type { PaymentProcessor, RefundOutcome } from '../../payments/processor.js';
import { findPayment } from '../../payments/repository.js';
import { processorFor } from '../../payments/select.js';
import { recordEvent } from '../../webhooks/outbox.js';
import { revokeBenefits } from '../benefit-grants/service.js';
import { applyRefundedAmounts, findOrder } from '../orders/repository.js';
import { canTransition, refundableAmount, refundTaxFor, REFUNDABLE_STATUSES, statusAfterRefunds, type StoredOrder } from '../orders/schema.js';
import { orderNotFound, recordOrderEvents, type Access } from '../orders/service.js';
import { formatAmount as money } from '../shared/currencies.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { findRefund, findRefundByProcessorId, insertRefund, listRefunds as listRows, settleRefund } from './repository.js';
import { canRefundTransition, type Refund, type RefundCreate, type RefundFilter } from './schema.js';
import { serializeRefund } from './serialize.js';

/** Settles a refund left pending (the daemon stopped between the claim and the processor's answer). */
export const REFUND_SETTLE_JOB = 'refund.settle';
/** How long a refund may stay pending before the settle job takes it over. */
export const REFUND_SETTLE_DELAY_MS = 5 * 60 * 1000;

export interface RefundDeps {
  db: Database;
  /** Real time; each organization's own clock is derived from it. */
  clock: Clock;
  payments?: PaymentProcessor;
  /** Stripe when configured: the processor of organizations not marked sandbox (core/payments/select.ts). */
  livePayments?: PaymentProcessor | null;
}

type Issue = { loc: (string | number)[]; msg: string; type: string };
const invalid = (code: string, field: string, msg: string) =>
  new CoreError('invalid', code, msg, [{ loc: ['body', field], msg, type: 'value_error' } satisfies Issue]);

/** Why an order cannot be refunded as asked, checked against the order as it is now (inside the lock). */
function refusal(order: StoredOrder, input: RefundCreate): CoreError | undefined {
  if (order.status === 'refunded') return new CoreError('forbidden', 'ORDER_REFUNDED_ALREADY', 'The order is already fully refunded');
  if (!REFUNDABLE_STATUSES.includes(order.status)) return new CoreError('conflict', 'ORDER_NOT_PAID', `The order is ${order.status}: only a paid order can be refunded`);
  if (input.revoke_benefits && order.subscriptionId) {
    // Polar's 400 RevokeSubscriptionBenefitsProhibited, not a validation error: the body is valid, the order is not.
    return new CoreError('bad_request', 'REVOKE_BENEFITS_NOT_ALLOWED', 'Subscription benefits can only be revoked upon cancellation: revoke_benefits is for one-time purchases; a subscription’s benefits are revoked when it is revoked');
  }
  const refundable = refundableAmount(order);
  if (input.amount > refundable) {
    return invalid(
      'REFUND_AMOUNT_TOO_HIGH',
      'amount',
      `Refund amount ${money(input.amount, order.currency)} exceeds the refundable amount ${money(refundable, order.currency)} (${refundable} minor units)`,
    );
  }
  return undefined;
}

/**
 * Refunds part or all of a paid order, in three steps so that concurrent refunds can never return more than was
 * paid and a processor failure loses nothing:
 * 1. one transaction locks the order, checks the amount against what is still refundable, claims it on the order
 *    with a guarded update (paid → partially_refunded → refunded through the transition table) and records the
 *    refund as pending (refund.created);
 * 2. the processor refunds net + tax of the payment that settled the order (idempotent on the refund's id);
 * 3. a second transaction settles the refund: succeeded (refund.updated, order.updated, order.refunded, and the
 *    benefits revoked when asked), or failed, giving the claimed amount back to the order.
 */
export async function createRefund(deps: RefundDeps, access: Access, input: RefundCreate): Promise<Refund> {
  const { refund, processorPaymentId, clock, payments } = await deps.db.transaction(async (trx) => {
    const order = await findOrder(trx, input.order_id, [...access.read], { forUpdate: true });
    if (!order) throw invalid('ORDER_NOT_FOUND', 'order_id', 'Order not found');
    if (!access.write.has(order.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this order but not refund it');
    const refused = refusal(order, input);
    if (refused) throw refused;

    let processorPaymentId: string | null = null;
    const payments = deps.payments && (await processorFor(trx, { payments: deps.payments, livePayments: deps.livePayments }, order.organizationId));
    if (order.totalAmount > 0) {
      const payment = order.paymentId ? await findPayment(trx, order.paymentId) : undefined;
      if (!payment?.processorPaymentId || payment.status !== 'succeeded') {
        throw new CoreError('conflict', 'ORDER_HAS_NO_PAYMENT', 'The order has no captured payment to refund through the payment processor');
      }
      if (!payments || payment.processor !== payments.name) {
        throw new CoreError('conflict', 'PROCESSOR_UNAVAILABLE', `The order was paid through the ${payment.processor} processor, which this daemon is not configured with`);
      }
      processorPaymentId = payment.processorPaymentId;
    }

    const clock = await organizationClock(trx, deps.clock, order.organizationId);
    const now = clock.now();
    const taxAmount = refundTaxFor(order, input.amount);
    const status = statusAfterRefunds(order, order.refundedAmount + input.amount);
    if (!canTransition(order.status, status)) throw new CoreError('conflict', 'ORDER_NOT_REFUNDABLE', `An order cannot go from ${order.status} to ${status}`);
    const claimed = await applyRefundedAmounts(trx, order, { amount: input.amount, taxAmount, status }, now);
    if (!claimed) throw new CoreError('conflict', 'ORDER_CHANGED', 'Another refund of this order went through meanwhile; check the refundable amount and try again');

    const refund: Refund = {
      id: newId(),
      organizationId: order.organizationId,
      orderId: order.id,
      subscriptionId: order.subscriptionId,
      customerId: order.customerId,
      paymentId: order.paymentId,
      status: 'pending',
      reason: input.reason,
      amount: input.amount,
      taxAmount,
      currency: order.currency,
      comment: input.comment ?? null,
      revokeBenefits: input.revoke_benefits ?? false,
      processorRefundId: null,
      failureReason: null,
      metadata: input.metadata ?? {},
      createdAt: now,
      modifiedAt: null,
    };
    await insertRefund(trx, refund);
    await recordEvent(trx, clock, { organizationId: refund.organizationId, type: 'refund.created', data: serializeRefund(refund) });
    // Should the daemon stop before step 3, this job finishes the refund (the processor call is idempotent).
    await scheduleJob(trx, { organizationId: refund.organizationId, kind: REFUND_SETTLE_JOB, subjectId: refund.id, runAt: new Date(now.getTime() + REFUND_SETTLE_DELAY_MS) });
    return { refund, processorPaymentId, clock, payments };
  });

  const outcome = await processorRefund(payments, refund, processorPaymentId);
  const settled = await settle(deps.db, clock, refund, outcome);
  if (settled.status === 'failed') {
    throw new CoreError('payment_failed', 'REFUND_FAILED', `The payment processor refused the refund: ${settled.failureReason}. Nothing was refunded.`);
  }
  return settled;
}

const refundRequest = (refund: Refund, processorIntentId: string) => ({
  processorIntentId,
  amount: refund.amount + refund.taxAmount,
  currency: refund.currency,
  idempotencyKey: refund.id,
  refundId: refund.id,
});

/** Step 2: the processor gives back net + tax (nothing to do for a free order); a throw counts as a refusal. */
async function processorRefund(payments: PaymentProcessor | undefined, refund: Refund, processorPaymentId: string | null): Promise<RefundOutcome> {
  // A free order: nothing was charged, so nothing goes back through the processor.
  if (processorPaymentId === null) return { status: 'succeeded', processorRefundId: '' };
  if (!payments) return { status: 'failed', processorRefundId: null, message: 'no payment processor is configured' };
  try {
    return await payments.refund(refundRequest(refund, processorPaymentId));
  } catch (error) {
    return { status: 'failed', processorRefundId: null, message: error instanceof Error ? error.message : 'The payment processor failed' };
  }
}

/**
 * Step 3 of createRefund, and what a later answer does: records the processor's answer and its consequences in
 * one transaction, guarded on the status the refund was read in, so the request, the settle job and a processor
 * event never apply one answer twice. `pending` keeps the refund pending with the processor's id and asks again
 * later; `succeeded` announces it (and revokes benefits when asked); `failed` — at once, or late after it had
 * succeeded — gives the amount back to the order. `clock` is the organization's.
 */
async function settle(db: Database, clock: Clock, read: Refund, outcome: RefundOutcome): Promise<Refund> {
  return db.transaction(async (trx) => {
    const now = clock.now();
    const processorRefundId = outcome.processorRefundId || read.processorRefundId;
    if (outcome.status === 'pending') {
      if (read.status !== 'pending') return read;
      const waiting: Refund = { ...read, processorRefundId, modifiedAt: now };
      if (await settleRefund(trx, waiting, 'pending')) {
        await scheduleJob(trx, { organizationId: read.organizationId, kind: REFUND_SETTLE_JOB, subjectId: read.id, runAt: new Date(now.getTime() + REFUND_SETTLE_DELAY_MS) });
      }
      return (await findRefund(trx, read.id))!;
    }
    const status = outcome.status;
    if (read.status === status || !canRefundTransition(read.status, status)) return read;
    const refund: Refund = {
      ...read,
      status,
      processorRefundId,
      failureReason: outcome.status === 'failed' ? outcome.message : null,
      modifiedAt: now,
    };
    if (!(await settleRefund(trx, refund, read.status))) return (await findRefund(trx, read.id))!;
    await cancelJob(trx, REFUND_SETTLE_JOB, refund.id);

    const order = await findOrder(trx, refund.orderId, null, { forUpdate: true });
    if (!order) throw orderNotFound();
    if (status === 'failed') {
      // Give back what step 1 claimed: the order is as if the refund had never been asked for.
      const back = statusAfterRefunds(order, order.refundedAmount - refund.amount);
      if (!canTransition(order.status, back) && order.status !== back) throw new Error(`refund ${refund.id}: order ${order.id} cannot go from ${order.status} to ${back}`);
      if (!(await applyRefundedAmounts(trx, order, { amount: -refund.amount, taxAmount: -refund.taxAmount, status: back }, now))) {
        throw new Error(`refund ${refund.id}: could not give the claimed amount back to order ${order.id}`);
      }
      await recordEvent(trx, clock, { organizationId: refund.organizationId, type: 'refund.updated', data: serializeRefund(refund) });
      // A refund that failed after it had succeeded changed the order the customer saw.
      if (read.status === 'succeeded') await recordOrderEvents(trx, clock, (await findOrder(trx, order.id, null))!, ['order.updated']);
      return refund;
    }
    await recordEvent(trx, clock, { organizationId: refund.organizationId, type: 'refund.updated', data: serializeRefund(refund) });
    await recordOrderEvents(trx, clock, order, ['order.updated', 'order.refunded']);
    if (refund.revokeBenefits) {
      await revokeBenefits(trx, clock, { organizationId: order.organizationId, customerId: order.customerId, orderId: order.id });
    }
    return refund;
  });
}

/**
 * Settles a refund from a processor's event (a webhook): found by Till's refund id when the event carries it
 * (metadata), else by the processor's refund id. A late failure of a succeeded refund gives its amount back to
 * the order. `deps.clock` is real time. Answers the refund, or undefined when it is not Till's.
 */
export async function settleRefundFromProcessor(
  deps: { db: Database; clock: Clock },
  event: { processor: string; processorRefundId: string; refundId?: string | null; outcome: RefundOutcome },
): Promise<Refund | undefined> {
  const refund = (event.refundId ? await findRefund(deps.db, event.refundId) : undefined) ?? (await findRefundByProcessorId(deps.db, event.processorRefundId));
  if (!refund) return undefined;
  const payment = refund.paymentId ? await findPayment(deps.db, refund.paymentId) : undefined;
  if (payment && payment.processor !== event.processor) return undefined;
  const clock = await organizationClock(deps.db, deps.clock, refund.organizationId);
  return settle(deps.db, clock, refund, event.outcome);
}

export async function listRefunds(db: Database, filter: RefundFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<Refund>> {
  return listRows(db, filter, sorting, page);
}

/**
 * The refund domain's jobs: finishing a refund left pending, because the daemon stopped before the processor's
 * answer, or because the processor answered `pending`. It asks the processor about the refund's key, and sends
 * it again (same key: never a second refund) when the processor never received it. A settled refund is left alone.
 */
export const refundJobs: JobHandlers = {
  [REFUND_SETTLE_JOB]: async ({ db, clock, payments }, job) => {
    const refund = await findRefund(db, job.subjectId);
    if (!refund || refund.status !== 'pending') return;
    const payment = refund.paymentId ? await findPayment(db, refund.paymentId) : undefined;
    let outcome: RefundOutcome;
    if (payment && payment.processor !== payments.name) outcome = { status: 'failed', processorRefundId: null, message: `the ${payment.processor} processor is not configured` };
    else if (!payment?.processorPaymentId) outcome = await processorRefund(payments, refund, null);
    else {
      const lookup = await payments.retrieveRefund({ idempotencyKey: refund.id, processorRefundId: refund.processorRefundId, refundId: refund.id });
      outcome = lookup.status === 'not_found' ? await processorRefund(payments, refund, payment.processorPaymentId) : lookup;
    }
    await settle(db, clock, refund, outcome);
  },
};
