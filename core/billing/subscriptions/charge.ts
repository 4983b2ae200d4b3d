import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import type { Executor } from '../../db/database.js';
import { cancelJob, scheduleJob } from '../../jobs/jobs.js';
import type { PaymentProcessor } from '../../payments/processor.js';
import { findPaymentMethod, insertPayment, isSettledPayment, paymentMethodsOf, paymentOfAttempt, unsettledPaymentsOfOrder, type Payment, type PaymentMethod } from '../../payments/repository.js';
import { cycleBenefits } from '../benefit-grants/service.js';
import { findOrder } from '../orders/repository.js';
import { markOrderPaid } from '../orders/service.js';
import { intentRequest, PAYMENT_ACTION_WINDOW_MS, PAYMENT_SETTLE_DELAY_MS, PAYMENT_SETTLE_JOB } from '../payments/intents.js';
import { PAY_LINK_MAIL_JOB } from '../pay-links/job-kinds.js';
import type { StoredOrder } from '../orders/schema.js';
import { settleIntent } from '../payments/settle.js';
import { nextRetryAt } from './dunning.js';
import { PAST_DUE_REVOKE_JOB, subscriptionRecovered, subscriptionWentPastDue } from './past-due-access.js';
import { CHARGE_JOB, RENEW_JOB } from './job-kinds.js';
import { commit, endSubscription, type BillingContext } from './renewal.js';
import { findSubscription } from './repository.js';
import type { Subscription } from './schema.js';
import { isTerminal } from './transitions.js';

/** The method a subscription's charges go to: its own, else the customer's newest saved one. */
export async function methodOf(db: Executor, s: Subscription): Promise<PaymentMethod | undefined> {
  const own = s.paymentMethodId ? await findPaymentMethod(db, s.paymentMethodId) : undefined;
  if (own && own.customerId === s.customerId) return own;
  return (await paymentMethodsOf(db, s.customerId))[0];
}

/**
 * Charges the order a subscription owes, off-session, with its saved method. One transaction claims the try:
 * it writes the payment intent for this order and dunning attempt (unique: a second worker, or this job run
 * again after a crash, finds it and asks the processor again with the same key, which never charges twice) and
 * the settle job. Then the processor is asked and its answer settles the intent (finishSubscriptionPayment).
 * Without a saved method the try is recorded as declined at once. Answers the payment, if a try was due.
 */
export async function chargeSubscription(context: BillingContext & { payments: PaymentProcessor }, subscriptionId: string): Promise<Payment | undefined> {
  const { db, clock, payments } = context;
  const claimed = await db.transaction(async (trx) => {
    const s = await findSubscription(trx, subscriptionId, 'any', { forUpdate: true });
    if (!s || isTerminal(s.status) || !s.dunningOrderId) return undefined;
    const order = await findOrder(trx, s.dunningOrderId, [s.organizationId]);
    if (!order || order.status !== 'pending') return undefined;
    const tried = await paymentOfAttempt(trx, order.id, s.dunningAttempts);
    if (tried) return tried;
    const now = clock.now();
    // A retry never comes before its day on the dunning schedule: a worker that claimed the charge job just before
    // the previous try's decline rescheduled it (the renewal charges at once, and its job is due too) leaves it.
    const previous = s.dunningAttempts > 0 ? await paymentOfAttempt(trx, order.id, s.dunningAttempts - 1) : undefined;
    const retryAt = previous?.status === 'failed' ? nextRetryAt(previous.modifiedAt ?? previous.createdAt, s.dunningAttempts) : undefined;
    if (retryAt && retryAt.getTime() > now.getTime()) {
      await scheduleJob(trx, { organizationId: s.organizationId, kind: CHARGE_JOB, subjectId: s.id, runAt: retryAt });
      return undefined;
    }
    // The customer is paying it from their pay link right now (or authenticating): this try waits until that
    // payment is settled or abandoned, so the order is never charged twice; no dunning attempt is used up.
    if ((await unsettledPaymentsOfOrder(trx, order.id)).some((payment) => payment.purpose === 'pay_link')) {
      await scheduleJob(trx, { organizationId: s.organizationId, kind: CHARGE_JOB, subjectId: s.id, runAt: new Date(now.getTime() + PAYMENT_ACTION_WINDOW_MS + PAYMENT_SETTLE_DELAY_MS) });
      return undefined;
    }
    const method = await methodOf(trx, s);
    const payment = await insertPayment(trx, {
      organizationId: s.organizationId,
      customerId: s.customerId,
      checkoutId: null,
      orderId: order.id,
      subscriptionId: s.id,
      purpose: 'subscription',
      attempt: s.dunningAttempts,
      processor: payments.name,
      processorMethodId: method?.processorMethodId ?? null,
      processorCustomerId: method?.processorCustomerId ?? null,
      amount: order.totalAmount,
      currency: order.currency,
      offSession: true,
      description: `${order.billingReason === 'subscription_cycle' ? 'Renewal' : 'Change'} of subscription ${s.id}`,
      returnUrl: null,
      methodBrand: method?.brand ?? null,
      methodLast4: method?.last4 ?? null,
      methodExpMonth: method?.expMonth ?? null,
      methodExpYear: method?.expYear ?? null,
      plan: null,
      createdAt: now,
      ...(method ? {} : { status: 'failed' as const, declineCode: 'card_declined', declineMessage: 'The customer has no saved payment method.' }),
    });
    if (!method) {
      await finishSubscriptionPayment(trx, clock, context.baseUrl, payment);
      return payment;
    }
    await scheduleJob(trx, { organizationId: s.organizationId, kind: PAYMENT_SETTLE_JOB, subjectId: payment.id, runAt: new Date(now.getTime() + PAYMENT_SETTLE_DELAY_MS) });
    return payment;
  });
  if (!claimed || isSettledPayment(claimed.status)) return claimed;
  // Called outside any transaction; a throw leaves the intent to the settle job.
  const outcome = claimed.status === 'created' ? await payments.createIntent(intentRequest(claimed)) : await payments.retrieveIntent({ idempotencyKey: claimed.idempotencyKey, processorIntentId: claimed.processorPaymentId, paymentId: claimed.id });
  if (outcome.status === 'not_found') return claimed;
  return settleIntent(context, claimed.id, outcome);
}

/**
 * Finishes a settled try at a subscription's owed order, in the settling transaction. Paid: the order is paid and
 * the subscription active on its period (benefits cycled for a renewal). Declined: past_due, retried on the
 * dunning schedule (dunning.ts); after the last retry it is canceled and its benefits revoked. A try that the
 * subscription no longer waits for (revoked meanwhile) gives paid money back. `clock` is the organization's.
 */
export async function finishSubscriptionPayment(trx: Knex.Transaction, clock: Clock, baseUrl: string, payment: Payment): Promise<{ giveBack: boolean }> {
  const current = payment.subscriptionId ? await findSubscription(trx, payment.subscriptionId, 'any', { forUpdate: true }) : undefined;
  if (!current || isTerminal(current.status) || current.dunningOrderId !== payment.orderId || current.dunningAttempts !== payment.attempt) {
    const order = payment.orderId ? await findOrder(trx, payment.orderId, [payment.organizationId]) : undefined;
    return { giveBack: payment.status === 'succeeded' && order?.status === 'pending' };
  }
  const now = clock.now();
  const order = (await findOrder(trx, payment.orderId!, [payment.organizationId]))!;
  if (payment.status === 'succeeded') {
    await payOwedOrder(trx, clock, baseUrl, current, order, payment.id);
    return { giveBack: false };
  }
  const attempts = current.dunningAttempts + 1;
  const retryAt = nextRetryAt(now, attempts);
  if (!retryAt) {
    await endSubscription(trx, clock, baseUrl, current, now, { dunningAttempts: attempts });
    return { giveBack: false };
  }
  const next: Subscription = { ...current, status: 'past_due', pastDueAt: current.pastDueAt ?? now, dunningAttempts: attempts, modifiedAt: now };
  await scheduleJob(trx, { organizationId: current.organizationId, kind: CHARGE_JOB, subjectId: current.id, runAt: retryAt });
  // The customer is mailed a link to pay it themselves (core/billing/pay-links), while dunning goes on.
  await scheduleJob(trx, { organizationId: current.organizationId, kind: PAY_LINK_MAIL_JOB, subjectId: payment.id, runAt: now });
  await commit(trx, clock, baseUrl, current, next);
  if (current.status !== 'past_due') await subscriptionWentPastDue(trx, clock, next, next.pastDueAt!);
  return { giveBack: false };
}

/**
 * Marks a subscription's owed order paid by `paymentId`, in the settling transaction: the subscription active on
 * its period again, dunning stopped, the next renewal scheduled, benefits cycled for a renewal; the events are a
 * paid renewal's. `current` is the subscription read (locked) in this transaction; `changes` go along (a new method).
 */
export async function payOwedOrder(
  trx: Knex.Transaction,
  clock: Clock,
  baseUrl: string,
  current: Subscription,
  order: StoredOrder,
  paymentId: string,
  changes: Partial<Subscription> = {},
): Promise<void> {
  const now = clock.now();
  await markOrderPaid(trx, clock, order.id, paymentId);
  const next: Subscription = { ...current, ...changes, status: 'active', pastDueAt: null, dunningAttempts: 0, dunningOrderId: null, modifiedAt: now };
  await cancelJob(trx, CHARGE_JOB, current.id);
  // A renewal skipped while the charge was owed is due now (or at the period's end).
  const renewAt = current.currentPeriodEnd.getTime() > now.getTime() ? current.currentPeriodEnd : now;
  await scheduleJob(trx, { organizationId: current.organizationId, kind: RENEW_JOB, subjectId: current.id, runAt: renewAt });
  await commit(trx, clock, baseUrl, current, next);
  await cancelJob(trx, PAST_DUE_REVOKE_JOB, current.id);
  const regranted = current.status === 'past_due' && (await subscriptionRecovered(trx, clock, next));
  if (!regranted && order.billingReason === 'subscription_cycle') {
    await cycleBenefits(trx, clock, { organizationId: current.organizationId, customerId: current.customerId, subscriptionId: current.id });
  }
}
