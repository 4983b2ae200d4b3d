import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { organizationClock } from '../../jobs/clock.js';
import { cancelJob, scheduleJob, type JobHandlers } from '../../jobs/jobs.js';
import type { IntentOutcome } from '../../payments/processor.js';
import { processorFor } from '../../payments/select.js';
import { findPayment, findPaymentByProcessorId, isSettledPayment, transitionPayment, type Payment } from '../../payments/repository.js';
import { abandonCheckoutPayment, finishCheckoutPayment } from '../checkouts/settle.js';
import { finishPlanChange } from '../subscriptions/change-product.js';
import { finishSubscriptionPayment } from '../subscriptions/charge.js';
import { finishPayLinkPayment } from '../pay-links/finish.js';
import {
  intentRequest,
  PAYMENT_ACTION_WINDOW_MS,
  PAYMENT_GIVE_BACK_JOB,
  PAYMENT_PROCESSING_POLL_MS,
  PAYMENT_SETTLE_JOB,
  settlementOf,
  type PaymentDeps,
} from './intents.js';

/** What a settled payment's purpose finishes in the settling transaction; `giveBack` when the money has nothing left to pay for. */
type Finished = { giveBack: boolean };

function finish(trx: Knex.Transaction, clock: Clock, baseUrl: string, payment: Payment): Promise<Finished> {
  switch (payment.purpose) {
    case 'checkout':
      return finishCheckoutPayment(trx, clock, baseUrl, payment);
    case 'subscription':
      return finishSubscriptionPayment(trx, clock, baseUrl, payment);
    case 'subscription_update':
      return finishPlanChange(trx, clock, baseUrl, payment);
    case 'pay_link':
      return finishPayLinkPayment(trx, clock, baseUrl, payment);
  }
}

/**
 * Records a processor's answer about an intent and finishes what it paid for, in ONE transaction: the payment
 * moves along its transition table (guarded: of two settlers, the request and the settle job or a processor event,
 * exactly one applies it), then a final answer makes the order, grants and events (or reopens the checkout,
 * or moves dunning on); an answer that is not final schedules the settle job to ask again. `deps.clock` is the
 * organization's clock. Answers the payment as it now is.
 */
export async function settleIntent(deps: PaymentDeps, paymentId: string, outcome: IntentOutcome): Promise<Payment> {
  const { clock, baseUrl } = deps;
  let giveBack = false;
  try {
    const settled = await deps.db.transaction(async (trx) => {
      const current = await findPayment(trx, paymentId, { forUpdate: true });
      if (!current) throw new Error(`payment ${paymentId} does not exist`);
      if (isSettledPayment(current.status)) return current;
      const now = clock.now();
      const next = settlementOf(current, outcome, now);
      if (next.status === current.status) {
        // Still waiting: ask again later.
        if (current.status === 'processing') await scheduleJob(trx, { organizationId: current.organizationId, kind: PAYMENT_SETTLE_JOB, subjectId: current.id, runAt: new Date(now.getTime() + PAYMENT_PROCESSING_POLL_MS) });
        return current;
      }
      if (!(await transitionPayment(trx, current, next))) return (await findPayment(trx, paymentId))!;
      const payment: Payment = { ...current, ...next };
      if (!isSettledPayment(payment.status)) {
        const wait = payment.status === 'requires_action' ? PAYMENT_ACTION_WINDOW_MS : PAYMENT_PROCESSING_POLL_MS;
        await scheduleJob(trx, { organizationId: payment.organizationId, kind: PAYMENT_SETTLE_JOB, subjectId: payment.id, runAt: new Date(now.getTime() + wait) });
        return payment;
      }
      await cancelJob(trx, PAYMENT_SETTLE_JOB, payment.id);
      ({ giveBack } = await finish(trx, clock, baseUrl, payment));
      if (giveBack) await scheduleJob(trx, { organizationId: payment.organizationId, kind: PAYMENT_GIVE_BACK_JOB, subjectId: payment.id, runAt: now });
      return payment;
    });
    if (giveBack) await giveBackPayment(deps, settled).catch(() => undefined); // the job scheduled above retries it
    return settled;
  } catch (error) {
    // Captured, but the delivery failed (a bug): the checkout fails and the money goes back, as before intents.
    if (outcome.status === 'succeeded') await abandonAfterFailure(deps, paymentId, outcome);
    throw error;
  }
}

async function abandonAfterFailure(deps: PaymentDeps, paymentId: string, outcome: IntentOutcome): Promise<void> {
  const abandoned = await deps.db.transaction(async (trx) => {
    const current = await findPayment(trx, paymentId, { forUpdate: true });
    if (!current || current.purpose !== 'checkout' || isSettledPayment(current.status)) return undefined;
    const now = deps.clock.now();
    if (!(await transitionPayment(trx, current, settlementOf(current, outcome, now)))) return undefined;
    await cancelJob(trx, PAYMENT_SETTLE_JOB, current.id);
    await abandonCheckoutPayment(trx, deps.clock, deps.baseUrl, current);
    await scheduleJob(trx, { organizationId: current.organizationId, kind: PAYMENT_GIVE_BACK_JOB, subjectId: current.id, runAt: now });
    return { ...current, processorPaymentId: outcome.processorIntentId };
  });
  if (abandoned) await giveBackPayment(deps, abandoned).catch(() => undefined);
}

/** Refunds a whole captured payment that delivered nothing; idempotent on the payment, so the job and a retry are one refund. */
async function giveBackPayment(deps: PaymentDeps, payment: Payment): Promise<void> {
  if (!payment.processorPaymentId) return;
  const payments = await processorFor(deps.db, deps, payment.organizationId);
  const outcome = await payments.refund({
    processorIntentId: payment.processorPaymentId,
    amount: payment.amount,
    currency: payment.currency,
    idempotencyKey: `till_give_back_${payment.id}`,
    refundId: `give_back_${payment.id}`,
  });
  if (outcome.status === 'failed') throw new Error(`giving back payment ${payment.id} failed: ${outcome.message}`);
}

/**
 * Asks the processor where an intent stands and settles what it learns; the settle job, and the hosted checkout
 * when the customer comes back from authenticating. An intent the processor never received is created now with
 * the same key and request (it cannot be two charges); one still waiting for the customer after the action window
 * is abandoned. `deps.clock` is the organization's clock.
 */
export async function refreshIntent(deps: PaymentDeps, paymentId: string, options: { abandonIfWaiting: boolean }): Promise<Payment | undefined> {
  const payment = await findPayment(deps.db, paymentId);
  if (!payment || isSettledPayment(payment.status)) return payment;
  const payments = await processorFor(deps.db, deps, payment.organizationId);
  if (payment.processor !== payments.name) throw new Error(`payment ${payment.id} was made through ${payment.processor}, which this daemon is not configured with`);
  const ref = { idempotencyKey: payment.idempotencyKey, processorIntentId: payment.processorPaymentId, paymentId: payment.id };
  const lookup = await payments.retrieveIntent(ref);
  let outcome: IntentOutcome;
  if (lookup.status === 'not_found') outcome = await payments.createIntent(intentRequest(payment));
  else if (lookup.status === 'requires_action' && options.abandonIfWaiting) outcome = await payments.cancelIntent({ processorIntentId: lookup.processorIntentId });
  else outcome = lookup;
  return settleIntent(deps, payment.id, outcome);
}

/**
 * Settles an intent from a processor's event (a webhook): the payment is found by Till's id when the event carries
 * it (metadata), else by the processor's intent id. `deps.clock` is real time. Answers the payment, or undefined
 * when the intent is not Till's (an event about a charge made elsewhere on the same account).
 */
export async function settleIntentFromProcessor(
  deps: PaymentDeps,
  event: { processor: string; processorIntentId: string; paymentId?: string | null; outcome: IntentOutcome },
): Promise<Payment | undefined> {
  const payment =
    (event.paymentId ? await findPayment(deps.db, event.paymentId) : undefined) ?? (await findPaymentByProcessorId(deps.db, event.processor, event.processorIntentId));
  if (!payment || payment.processor !== event.processor) return undefined;
  const clock = await organizationClock(deps.db, deps.clock, payment.organizationId);
  return settleIntent({ ...deps, clock }, payment.id, event.outcome);
}

/** The payment domain's jobs: asking about an unanswered intent, giving back money that paid for nothing. */
export const paymentJobs: JobHandlers = {
  [PAYMENT_SETTLE_JOB]: async (context, job) => {
    const payment = await findPayment(context.db, job.subjectId);
    if (!payment || isSettledPayment(payment.status)) return;
    await refreshIntent(context, payment.id, { abandonIfWaiting: payment.status === 'requires_action' });
  },
  [PAYMENT_GIVE_BACK_JOB]: async (context, job) => {
    const payment = await findPayment(context.db, job.subjectId);
    if (payment?.status === 'succeeded') await giveBackPayment(context, payment);
  },
};
