import { meteredLineItems } from '../../metering/billing.js';
import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import type { Database, Executor } from '../../db/database.js';
import { cancelJob, scheduleJob } from '../../jobs/jobs.js';
import { cycleBenefits, revokeBenefits } from '../benefit-grants/service.js';
import { findDiscount } from '../discounts/repository.js';
import { createOrder } from '../orders/service.js';
import { findPrice, findProductsByIds } from '../products/repository.js';
import { announceChange, type ChangeDetail } from './events.js';
import { CHARGE_JOB, RENEW_JOB } from './job-kinds.js';
import { orderInput, type Line } from './lines.js';
import { discountApplies, nextPeriodOf } from './periods.js';
import { customersOfSubscriptions, findSubscription, saveSubscription, subscriptionsOfCustomer } from './repository.js';
import type { PendingItem, Subscription } from './schema.js';
import { canTransition, isTerminal } from './transitions.js';

/** What the time-driven subscription work needs: the database, the organization's clock, the public URL. */
export interface BillingContext {
  db: Database;
  clock: Clock;
  baseUrl: string;
}

/** Saves a change made on a row read (and locked) in this transaction, along the transition table only. */
export async function commit(trx: Knex.Transaction, clock: Clock, baseUrl: string, current: Subscription, next: Subscription, detail?: ChangeDetail): Promise<void> {
  if (!canTransition(current.status, next.status)) throw new Error(`Subscription ${current.id} cannot go from ${current.status} to ${next.status}`);
  if (!(await saveSubscription(trx, current, next))) throw new Error(`Subscription ${current.id} changed under a locked update`);
  await announceChange(trx, clock, baseUrl, current, next, detail);
}

/** One period's charge: a line per price (or one line at the subscription's amount when its prices do not add up). */
export async function periodLines(db: Executor, s: Subscription): Promise<Line[]> {
  const [product] = await findProductsByIds(db, [s.productId]);
  const label = product?.name ?? 'Subscription';
  const prices = [];
  for (const id of s.priceIds) prices.push(await findPrice(db, id));
  const fixed = prices.map((price) => (price && price.amountType === 'fixed' ? price.priceAmount : null));
  if (prices.length > 1 && fixed.every((amount) => amount !== null) && fixed.reduce((a, b) => a! + b!, 0) === s.amount) {
    return prices.map((price, i) => ({ label, amount: fixed[i]!, proration: false, productPriceId: price!.id }));
  }
  // The subscription's amount is what its non-metered prices cost; metered ones are billed from usage.
  const base = prices.find((price) => price && price.amountType !== 'metered_unit');
  return [{ label, amount: s.amount, proration: false, productPriceId: base?.id ?? s.priceIds[0] ?? null }];
}

/**
 * The lines of an order with the pending prorations added; credits beyond what is owed are carried to the next
 * period rather than paid out, so an order never goes below zero.
 */
export function withPending(lines: Line[], pending: readonly PendingItem[]): { lines: Line[]; carried: PendingItem[] } {
  const all = [...lines, ...pending.map((item) => ({ ...item, proration: true }))];
  const total = all.reduce((sum, line) => sum + line.amount, 0);
  if (total >= 0) return { lines: all, carried: [] };
  return {
    lines: [...all, { label: 'Credit carried to the next period', amount: -total, proration: true, productPriceId: null }],
    carried: [{ label: 'Credit from the previous period', amount: total, productPriceId: null }],
  };
}

/** Ends a subscription now (revoked, canceled at period end, or dunning exhausted): no more renewals, benefits revoked. */
export async function endSubscription(trx: Knex.Transaction, clock: Clock, baseUrl: string, s: Subscription, at: Date, changes: Partial<Subscription> = {}): Promise<Subscription> {
  const next: Subscription = {
    ...s,
    ...changes,
    status: 'canceled',
    cancelAtPeriodEnd: false,
    canceledAt: s.canceledAt ?? at,
    endsAt: at,
    endedAt: at,
    dunningOrderId: null,
    modifiedAt: at,
  };
  await cancelJob(trx, RENEW_JOB, s.id);
  await cancelJob(trx, CHARGE_JOB, s.id);
  await commit(trx, clock, baseUrl, s, next);
  await revokeBenefits(trx, clock, { organizationId: s.organizationId, customerId: s.customerId, subscriptionId: s.id });
  return next;
}

/**
 * The work due at a subscription's period end, on the organization's clock: end it if it was set to cancel, or
 * move it to its next period and bill that period (charged right after, see charge.ts). Idempotent: a
 * subscription whose period has not ended yet is left alone. Answers whether a charge is now owed.
 */
export async function renewSubscription(context: BillingContext, subscriptionId: string): Promise<boolean> {
  const { db, clock, baseUrl } = context;
  return db.transaction(async (trx) => {
    const s = await findSubscription(trx, subscriptionId, 'any', { forUpdate: true });
    if (!s || isTerminal(s.status)) return false;
    const now = clock.now();
    if (now.getTime() < s.currentPeriodEnd.getTime()) {
      await scheduleJob(trx, { organizationId: s.organizationId, kind: RENEW_JOB, subjectId: s.id, runAt: s.currentPeriodEnd });
      return false;
    }
    // Set to cancel, or its customer was deleted meanwhile: it ends instead of renewing.
    const customer = (await customersOfSubscriptions(trx, [s.customerId])).get(s.customerId);
    if (s.cancelAtPeriodEnd || !customer || customer.deletedAt) {
      await endSubscription(trx, clock, baseUrl, s, s.currentPeriodEnd);
      return false;
    }
    // While a charge is owed (past_due, or a plan change not paid yet) the period does not move: dunning decides.
    if (s.status === 'past_due' || s.dunningOrderId !== null) return false;

    const period = nextPeriodOf(s);
    const discount = s.discountId ? ((await findDiscount(trx, s.discountId, [s.organizationId])) ?? null) : null;
    const applies = discount !== null && discountApplies(discount, s.discountStart, period.start);
    // Metered prices are billed in arrears: the consumption of the period that just ended, credits first, capped.
    const metered = await meteredLineItems(trx, { subscriptionId: s.id, periodStart: s.currentPeriodStart, periodEnd: s.currentPeriodEnd });
    const usage = metered.map(({ label, amount, proration, productPriceId }) => ({ label, amount, proration, productPriceId }));
    const { lines, carried } = withPending([...(await periodLines(trx, s)), ...usage], s.pendingItems);
    const { input, amounts } = await orderInput(trx, s, lines, { discount: applies ? discount : null, billingReason: 'subscription_cycle' });
    const free = amounts.totalAmount === 0;
    const order = await createOrder(trx, clock, { ...input, status: free ? 'paid' : 'pending', paymentId: null });
    const next: Subscription = {
      ...s,
      cycle: s.cycle + 1,
      currentPeriodStart: period.start,
      currentPeriodEnd: period.end,
      // A free period needs no payment: a trial that ends into it makes the subscription active right away.
      status: free && s.status === 'trialing' ? 'active' : s.status,
      pendingItems: carried,
      discountId: applies ? s.discountId : null,
      discountStart: applies ? s.discountStart : null,
      dunningAttempts: 0,
      dunningOrderId: free ? null : order.id,
      modifiedAt: now,
    };
    await scheduleJob(trx, { organizationId: s.organizationId, kind: RENEW_JOB, subjectId: s.id, runAt: period.end });
    if (!free) await scheduleJob(trx, { organizationId: s.organizationId, kind: CHARGE_JOB, subjectId: s.id, runAt: now });
    await commit(trx, clock, baseUrl, s, next);
    if (free) await cycleBenefits(trx, clock, { organizationId: s.organizationId, customerId: s.customerId, subscriptionId: s.id });
    return !free;
  });
}

/**
 * Ends every running subscription of a customer now (the customer is being deleted): call it in the deletion's
 * transaction with the organization's clock. Benefits are revoked and the events recorded as for a revoke.
 */
export async function revokeSubscriptionsOfCustomer(trx: Knex.Transaction, clock: Clock, baseUrl: string, customerId: string): Promise<void> {
  for (const running of await subscriptionsOfCustomer(trx, customerId, ['incomplete', 'trialing', 'active', 'past_due', 'unpaid'])) {
    const s = await findSubscription(trx, running.id, 'any', { forUpdate: true });
    if (s && !isTerminal(s.status)) await endSubscription(trx, clock, baseUrl, s, clock.now());
  }
}
