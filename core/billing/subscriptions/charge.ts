import type { PaymentProcessor, ChargeOutcome } from '../../payments/processor.js';
import { findPaymentMethod, paymentMethodsOf, recordPayment, type PaymentMethod } from '../../payments/repository.js';
import { cancelJob, scheduleJob } from '../../jobs/jobs.js';
import { cycleBenefits } from '../benefit-grants/service.js';
import { findOrder } from '../orders/repository.js';
import { markOrderPaid } from '../orders/service.js';
import { nextRetryAt } from './dunning.js';
import { CHARGE_JOB, RENEW_JOB } from './job-kinds.js';
import { commit, endSubscription, type BillingContext } from './renewal.js';
import { findSubscription } from './repository.js';
import type { Subscription } from './schema.js';
import { isTerminal } from './transitions.js';

/** The method a subscription's charges go to: its own, else the customer's newest saved one. */
export async function methodOf(context: BillingContext, s: Subscription): Promise<PaymentMethod | undefined> {
  const own = s.paymentMethodId ? await findPaymentMethod(context.db, s.paymentMethodId) : undefined;
  if (own && own.customerId === s.customerId) return own;
  return (await paymentMethodsOf(context.db, s.customerId))[0];
}

/**
 * Charges the order a subscription owes, off-session, with its saved method. Paid: the order is marked paid and
 * the subscription is active on its period (benefits cycled for a renewal). Declined: the subscription is
 * past_due and the charge is retried on the dunning schedule (dunning.ts); after the last retry it is canceled
 * and its benefits revoked. The processor is called outside any transaction, with an idempotency key per order
 * and attempt, so running this twice (a crashed worker) never charges twice. Answers the outcome, if it charged.
 */
export async function chargeSubscription(context: BillingContext & { payments: PaymentProcessor }, subscriptionId: string): Promise<ChargeOutcome | undefined> {
  const { db, clock, baseUrl, payments } = context;
  const s = await findSubscription(db, subscriptionId, 'any');
  if (!s || isTerminal(s.status) || !s.dunningOrderId) return undefined;
  const order = await findOrder(db, s.dunningOrderId, [s.organizationId]);
  if (!order || order.status !== 'pending') return undefined;

  const method = await methodOf(context, s);
  const outcome: ChargeOutcome = method
    ? await payments.charge({
        processorMethodId: method.processorMethodId,
        amount: order.totalAmount,
        currency: order.currency,
        idempotencyKey: `subscription-order:${order.id}:${s.dunningAttempts}`,
        description: `${order.billingReason === 'subscription_cycle' ? 'Renewal' : 'Change'} of subscription ${s.id}`,
        offSession: true,
      })
    : { status: 'failed', declineCode: 'card_declined', message: 'The customer has no saved payment method.' };

  const orphaned = await db.transaction(async (trx) => {
    const current = await findSubscription(trx, subscriptionId, 'any', { forUpdate: true });
    // Someone else settled it meanwhile (a concurrent worker with the same idempotency key, or a revoke).
    if (!current || isTerminal(current.status) || current.dunningOrderId !== order.id || current.dunningAttempts !== s.dunningAttempts) {
      // Paid for a subscription that ended meanwhile, and nobody marked the order paid: the money goes back.
      const ended = !current || isTerminal(current.status);
      return outcome.status === 'succeeded' && ended && (await findOrder(trx, order.id, [s.organizationId]))?.status === 'pending';
    }
    const now = clock.now();
    const payment = await recordPayment(trx, {
      organizationId: s.organizationId,
      customerId: s.customerId,
      orderId: order.id,
      processor: payments.name,
      processorPaymentId: outcome.status === 'succeeded' ? outcome.processorPaymentId : null,
      amount: order.totalAmount,
      currency: order.currency,
      status: outcome.status,
      methodBrand: method?.brand ?? null,
      methodLast4: method?.last4 ?? null,
      declineCode: outcome.status === 'failed' ? outcome.declineCode : null,
      declineMessage: outcome.status === 'failed' ? outcome.message : null,
      createdAt: now,
    });
    if (outcome.status === 'succeeded') {
      await markOrderPaid(trx, clock, order.id, payment.id);
      const next: Subscription = { ...current, status: 'active', pastDueAt: null, dunningAttempts: 0, dunningOrderId: null, modifiedAt: now };
      await cancelJob(trx, CHARGE_JOB, s.id);
      // A renewal skipped while the charge was owed is due now (or at the period's end).
      const renewAt = current.currentPeriodEnd.getTime() > now.getTime() ? current.currentPeriodEnd : now;
      await scheduleJob(trx, { organizationId: s.organizationId, kind: RENEW_JOB, subjectId: s.id, runAt: renewAt });
      await commit(trx, clock, baseUrl, current, next);
      if (order.billingReason === 'subscription_cycle') {
        await cycleBenefits(trx, clock, { organizationId: s.organizationId, customerId: s.customerId, subscriptionId: s.id });
      }
      return false;
    }
    const attempts = current.dunningAttempts + 1;
    const retryAt = nextRetryAt(now, attempts);
    if (!retryAt) {
      await endSubscription(trx, clock, baseUrl, current, now, { dunningAttempts: attempts });
      return false;
    }
    const next: Subscription = { ...current, status: 'past_due', pastDueAt: current.pastDueAt ?? now, dunningAttempts: attempts, modifiedAt: now };
    await scheduleJob(trx, { organizationId: s.organizationId, kind: CHARGE_JOB, subjectId: s.id, runAt: retryAt });
    await commit(trx, clock, baseUrl, current, next);
    return false;
  });
  if (orphaned && outcome.status === 'succeeded') {
    await payments.refund({ processorPaymentId: outcome.processorPaymentId, amount: order.totalAmount, currency: order.currency, idempotencyKey: `refund:${outcome.processorPaymentId}` });
  }
  return outcome;
}
