import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { scheduleJob } from '../../jobs/jobs.js';
import { processorFor } from '../../payments/select.js';
import { insertPayment, linkPayment, unsettledPaymentsOfSubscription, type Payment } from '../../payments/repository.js';
import type { OrderCreateInput } from '../orders/schema.js';
import { intentRequest, PAYMENT_SETTLE_DELAY_MS, PAYMENT_SETTLE_JOB } from '../payments/intents.js';
import { settleIntent } from '../payments/settle.js';
import { findDiscount } from '../discounts/repository.js';
import type { Amounts } from '../pricing/amounts.js';
import { createOrder } from '../orders/service.js';
import { findPrice, findProduct, findProductsByIds, pricesOf } from '../products/repository.js';
import { methodOf } from './charge.js';
import { orderInput, type Line } from './lines.js';
import { discountApplies } from './periods.js';
import { prorationLines } from './proration.js';
import { viewsOf, type SubscriptionView } from './relations.js';
import { commit } from './renewal.js';
import { findSubscription } from './repository.js';
import type { ProrationBehavior, Subscription } from './schema.js';
import { subscriptionNotFound } from './service.js';
import { isTerminal } from './transitions.js';
import { alreadyCanceled, invalid, issue, locked, writable, type Access, type SubscriptionDeps } from './update.js';

/** What planning a change reads: the database and the clock (no processor: nothing is charged). */
export type PlanDeps = Pick<SubscriptionDeps, 'db' | 'clock'>;

/** Whether the locked row is still the one a change was planned on. */
const unchanged = (planned: Subscription, now: Subscription) =>
  planned.status === now.status &&
  planned.cycle === now.cycle &&
  planned.productId === now.productId &&
  planned.priceIds.join() === now.priceIds.join() &&
  (planned.modifiedAt?.getTime() ?? 0) === (now.modifiedAt?.getTime() ?? 0);

/** The new product and its price: a live recurring product of the organization, on the same interval, with a fixed price in the currency. */
async function target(deps: PlanDeps, s: Subscription, productId: string) {
  const product = await findProduct(deps.db, productId, [s.organizationId]);
  if (!product) throw invalid([issue('product_id', 'Product not found.')]);
  if (product.id === s.productId) throw invalid([issue('product_id', 'The subscription is already on this product.')]);
  if (product.isArchived) throw invalid([issue('product_id', 'This product is archived.')]);
  if (product.recurringInterval === null) throw invalid([issue('product_id', 'This product is not a subscription product.')]);
  if (product.recurringInterval !== s.recurringInterval || (product.recurringIntervalCount ?? 1) !== s.recurringIntervalCount) {
    throw invalid([issue('product_id', `Till changes a subscription only to a product billed on the same interval (every ${s.recurringIntervalCount} ${s.recurringInterval}).`)]);
  }
  const price = (await pricesOf(deps.db, [product.id])).get(product.id)?.find((p) => p.priceCurrency === s.currency && p.amountType === 'fixed');
  if (!price || price.amountType !== 'fixed') throw invalid([issue('product_id', `This product has no fixed price in ${s.currency}.`)]);
  return { product, priceIds: [price.id], amount: price.priceAmount };
}

/**
 * The new product, read again and held in the transaction that moves the subscription onto it: read before, it may
 * have been deleted since (products.delete), and a deletion waiting on it then sees the subscription.
 */
async function holdTarget(trx: Knex.Transaction, s: Subscription, productId: string): Promise<void> {
  if (!(await findProduct(trx, productId, [s.organizationId], { forShare: true }))) throw invalid([issue('product_id', 'Product not found.')]);
}

/** Where a subscription moves: a product, the prices it will be on (the fixed one first) and the amount of each period. */
type Target = Awaited<ReturnType<typeof target>>;

/** A subscription the caller may change (to another product or price): not ended, no payment owed. */
async function changeable(_deps: PlanDeps, access: Access, s: Subscription) {
  if (!access.write.has(s.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this subscription but not change it');
  if (isTerminal(s.status) || s.status === 'unpaid') throw alreadyCanceled();
  if (s.status === 'past_due' || s.dunningOrderId !== null) throw locked('A payment is owed on this subscription; it can change product once that is settled.');
}

/**
 * Moves a subscription to another product. During a trial the new price simply applies from the first charge.
 * Otherwise the rest of the period is prorated (prorationLines): with `invoice` the difference is charged now
 * on an order of its own (billing reason subscription_update) — a decline refuses the change and changes
 * nothing; with `prorate`, or when the change leaves a credit, the lines wait for the next renewal order.
 */
export async function changeProduct(deps: SubscriptionDeps, access: Access, id: string, productId: string, behavior: ProrationBehavior): Promise<SubscriptionView> {
  const s = await findSubscription(deps.db, id, access.read);
  if (!s) throw subscriptionNotFound();
  await changeable(deps, access, s);
  return move(deps, access, s, await target(deps, s, productId), behavior);
}

/**
 * Moves a subscription onto another price of its own product (a catalog's price migration, `till apply` with
 * `migrate_subscriptions`): a live fixed price in the subscription's currency, with the product's live metered
 * prices in that currency beside it. The period's rest is prorated as for a change of product. A subscription
 * already on the price is answered as it is, so a repeat changes nothing.
 */
export async function migrateSubscriptionPrice(deps: SubscriptionDeps, access: Access, id: string, priceId: string, behavior: ProrationBehavior): Promise<SubscriptionView> {
  const s = await findSubscription(deps.db, id, access.read);
  if (!s) throw subscriptionNotFound();
  if (s.priceIds[0] === priceId) return (await viewsOf(deps.db, [s]))[0];
  await changeable(deps, access, s);
  const price = await findPrice(deps.db, priceId);
  if (!price || price.organizationId !== s.organizationId || price.productId !== s.productId) throw invalid([issue('price_id', 'No price of the subscription’s product has this id.')]);
  if (price.isArchived) throw invalid([issue('price_id', 'This price is archived.')]);
  if (price.amountType !== 'fixed' || price.priceCurrency !== s.currency) throw invalid([issue('price_id', `Subscriptions move only onto a fixed price in their currency (${s.currency}).`)]);
  const product = await findProduct(deps.db, s.productId, [s.organizationId]);
  if (!product) throw invalid([issue('price_id', 'The subscription’s product no longer exists.')]);
  if (product.recurringInterval !== s.recurringInterval || (product.recurringIntervalCount ?? 1) !== s.recurringIntervalCount) {
    throw invalid([issue('price_id', `The product is no longer billed every ${s.recurringIntervalCount} ${s.recurringInterval}, as the subscription is.`)]);
  }
  const metered = ((await pricesOf(deps.db, [product.id])).get(product.id) ?? []).filter((p) => p.amountType === 'metered_unit' && p.priceCurrency === s.currency);
  return move(deps, access, s, { product, priceIds: [price.id, ...metered.map((p) => p.id)], amount: price.priceAmount }, behavior);
}

/**
 * What moving `s` to `to` now bills: the two proration lines (none during a trial), whether they are charged at
 * once (`invoice` and a positive difference) and, then, that order. The change itself and its preview both read it.
 */
async function planMove(deps: PlanDeps, s: Subscription, to: Target, behavior: ProrationBehavior) {
  const { product, priceIds, amount } = to;
  const now = (await organizationClock(deps.db, deps.clock, s.organizationId)).now();
  const [current] = await findProductsByIds(deps.db, [s.productId]);
  const moved: Subscription = { ...s, productId: product.id, priceIds, amount, modifiedAt: now };

  let lines: Line[] = [];
  if (s.status !== 'trialing') {
    lines = prorationLines({
      periodStart: s.currentPeriodStart,
      periodEnd: s.currentPeriodEnd,
      now,
      from: { label: current?.name ?? 'previous plan', amount: s.amount, priceId: s.priceIds[0] ?? null },
      to: { label: product.name, amount, priceId: priceIds[0] },
    });
  }
  const net = lines.reduce((sum, line) => sum + line.amount, 0);
  const invoiceNow = behavior === 'invoice' && net > 0;

  // A percentage discount of the current period applies to its prorated difference too; a fixed one was taken off the period already.
  const discount = s.discountId ? ((await findDiscount(deps.db, s.discountId, [s.organizationId])) ?? null) : null;
  const periodDiscount = discount && discount.type === 'percentage' && discountApplies(discount, s.discountStart, s.currentPeriodStart) ? discount : null;
  const bill = invoiceNow ? await orderInput(deps.db, moved, lines, { discount: periodDiscount, billingReason: 'subscription_update' }) : undefined;
  return { now, moved, lines, net, invoiceNow, bill };
}

/** What a change of plan would cost if made now (previewProductChange). */
export interface PlanChangePreview {
  subscriptionId: string;
  productId: string;
  currency: string;
  prorationBehavior: ProrationBehavior;
  /** What each period costs on the new plan, before discount and tax. */
  amount: number;
  /** The rest of the period at the new price and the credit for it at the old one (negative); none during a trial. */
  lines: { label: string; amount: number }[];
  /** The order charged at once (proration `invoice` and more to pay): its amounts with discount and tax; null otherwise. */
  dueNow: Amounts | null;
  /** What the lines add to (or, negative, take off) the next renewal's subtotal when not charged at once. */
  nextRenewalAdjustment: number;
  /** The moment the proration was computed for (the organization's clock): a change made later prorates a little less. */
  at: Date;
}

/**
 * The prorated amounts a change of product would bill if made now, without changing anything: the same checks as
 * changeProduct (a refused change is refused here too) and the same computation, so a page can show the amount
 * before the customer confirms.
 */
export async function previewProductChange(deps: PlanDeps, access: Access, id: string, productId: string, behavior: ProrationBehavior): Promise<PlanChangePreview> {
  const s = await findSubscription(deps.db, id, access.read);
  if (!s) throw subscriptionNotFound();
  await changeable(deps, access, s);
  const to = await target(deps, s, productId);
  const { now, lines, net, invoiceNow, bill } = await planMove(deps, s, to, behavior);
  return {
    subscriptionId: s.id,
    productId: to.product.id,
    currency: s.currency,
    prorationBehavior: behavior,
    amount: to.amount,
    lines: lines.map(({ label, amount }) => ({ label, amount })),
    dueNow: bill ? bill.amounts : null,
    nextRenewalAdjustment: invoiceNow ? 0 : net,
    at: now,
  };
}

/** Moves a subscription to `to`, prorating the rest of the period (see changeProduct). */
async function move(deps: SubscriptionDeps, access: Access, s: Subscription, to: Target, behavior: ProrationBehavior): Promise<SubscriptionView> {
  const { moved, lines, invoiceNow, bill } = await planMove(deps, s, to, behavior);

  if (bill && bill.amounts.totalAmount > 0) return invoiceChange(deps, access, s, moved, bill.input, behavior);

  const saved = await deps.db.transaction(async (trx) => {
    const { s: current, clock } = await writable(trx, deps, access, s.id);
    if (!unchanged(s, current)) throw locked('The subscription changed meanwhile; try again.');
    await holdTarget(trx, s, to.product.id);
    const next: Subscription = { ...moved, pendingItems: invoiceNow ? s.pendingItems : [...s.pendingItems, ...lines] };
    // Invoiced, but nothing to pay (a full discount): the order is on record, paid.
    if (bill) await createOrder(trx, clock, { ...bill.input, status: 'paid', paymentId: null });
    await commit(trx, clock, deps.baseUrl, s, next, { proration_behavior: behavior });
    return next;
  });
  return (await viewsOf(deps.db, [saved]))[0];
}

/** What an invoiced plan change waits for while its payment is with the processor (stored on the intent). */
interface PlannedChange {
  fromProductId: string;
  cycle: number;
  productId: string;
  priceIds: string[];
  amount: number;
  order: Omit<OrderCreateInput, 'status' | 'paymentId'>;
  /** The change's proration behavior (absent on changes planned before it was kept). */
  behavior?: ProrationBehavior;
}

/**
 * An invoiced change with money due: one transaction claims it (the subscription locked and unchanged, no other
 * change's payment in flight) and writes the intent, which carries the planned change, and its settle job; then
 * the processor is asked and its answer settles the intent (finishPlanChange). A decline refuses the change and
 * changes nothing but the failed payment on record; a payment still processing leaves the change to its settlement.
 */
async function invoiceChange(deps: SubscriptionDeps, access: Access, s: Subscription, moved: Subscription, order: PlannedChange['order'], behavior: ProrationBehavior): Promise<SubscriptionView> {
  const payments = await processorFor(deps.db, deps, s.organizationId);
  const claimed = await deps.db.transaction(async (trx) => {
    const { s: current, clock } = await writable(trx, deps, access, s.id);
    if (!unchanged(s, current)) throw locked('The subscription changed meanwhile; try again.');
    await holdTarget(trx, s, moved.productId);
    if ((await unsettledPaymentsOfSubscription(trx, s.id)).length) throw locked('The payment of another change of this subscription is under way; try again once it is settled.');
    const now = clock.now();
    const method = await methodOf(trx, s);
    const plan: PlannedChange = { fromProductId: s.productId, cycle: s.cycle, productId: moved.productId, priceIds: moved.priceIds, amount: moved.amount, order, behavior };
    const payment = await insertPayment(trx, {
      organizationId: s.organizationId,
      customerId: s.customerId,
      checkoutId: null,
      orderId: null,
      subscriptionId: s.id,
      purpose: 'subscription_update',
      attempt: null,
      processor: payments.name,
      processorMethodId: method?.processorMethodId ?? null,
      processorCustomerId: method?.processorCustomerId ?? null,
      amount: order.totalAmount,
      currency: s.currency,
      offSession: true,
      description: `Change of subscription ${s.id}`,
      returnUrl: null,
      methodBrand: method?.brand ?? null,
      methodLast4: method?.last4 ?? null,
      methodExpMonth: method?.expMonth ?? null,
      methodExpYear: method?.expYear ?? null,
      plan: plan as unknown as Record<string, unknown>,
      createdAt: now,
      ...(method ? {} : { status: 'failed' as const, declineCode: 'card_declined', declineMessage: 'The customer has no saved payment method.' }),
    });
    if (method) await scheduleJob(trx, { organizationId: s.organizationId, kind: PAYMENT_SETTLE_JOB, subjectId: payment.id, runAt: new Date(now.getTime() + PAYMENT_SETTLE_DELAY_MS) });
    return { payment, clock };
  });
  let payment = claimed.payment;
  if (payment.status === 'created') {
    const outcome = await payments.createIntent(intentRequest(payment));
    payment = await settleIntent({ ...deps, clock: claimed.clock }, payment.id, outcome);
  }
  // The declined attempt is on record; the subscription is as it was.
  if (payment.status === 'failed') throw new CoreError('payment_failed', 'SUBSCRIPTION_PAYMENT_FAILED', `The change was not made: ${payment.declineMessage ?? 'the payment was declined.'}`);
  const now = (await findSubscription(deps.db, s.id, 'any'))!;
  return (await viewsOf(deps.db, [now]))[0];
}

/**
 * Applies an invoiced plan change once its payment settled, in the settling transaction: paid, the order is made
 * (paid, billing reason subscription_update) and the subscription moves to the new product; declined, nothing
 * changes. A change the subscription outgrew meanwhile (ended, renewed or changed otherwise) gives the money back.
 */
export async function finishPlanChange(trx: Knex.Transaction, clock: Clock, baseUrl: string, payment: Payment): Promise<{ giveBack: boolean }> {
  if (payment.status !== 'succeeded') return { giveBack: false };
  const plan = payment.plan as unknown as PlannedChange;
  const current = payment.subscriptionId ? await findSubscription(trx, payment.subscriptionId, 'any', { forUpdate: true }) : undefined;
  if (!current || isTerminal(current.status) || current.productId !== plan.fromProductId || current.cycle !== plan.cycle) return { giveBack: true };
  const order = await createOrder(trx, clock, { ...plan.order, status: 'paid', paymentId: payment.id });
  await linkPayment(trx, payment.id, { orderId: order.id });
  const next: Subscription = { ...current, productId: plan.productId, priceIds: plan.priceIds, amount: plan.amount, modifiedAt: clock.now() };
  await commit(trx, clock, baseUrl, current, next, plan.behavior ? { proration_behavior: plan.behavior } : undefined);
  return { giveBack: false };
}
