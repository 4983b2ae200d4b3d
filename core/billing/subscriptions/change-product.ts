import { CoreError } from '../../errors.js';
import { newId } from '../../db/columns.js';
import { organizationClock } from '../../jobs/clock.js';
import type { ChargeOutcome } from '../../payments/processor.js';
import { linkPayment, recordPayment } from '../../payments/repository.js';
import { findDiscount } from '../discounts/repository.js';
import { createOrder } from '../orders/service.js';
import { findProduct, findProductsByIds, pricesOf } from '../products/repository.js';
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

/** Whether the locked row is still the one a change was planned on. */
const unchanged = (planned: Subscription, now: Subscription) =>
  planned.status === now.status &&
  planned.cycle === now.cycle &&
  planned.productId === now.productId &&
  (planned.modifiedAt?.getTime() ?? 0) === (now.modifiedAt?.getTime() ?? 0);

/** The new product and its price: a live recurring product of the organization, on the same interval, with a fixed price in the currency. */
async function target(deps: SubscriptionDeps, s: Subscription, productId: string) {
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
  return { product, price, amount: price.priceAmount };
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
  if (!access.write.has(s.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this subscription but not change it');
  if (isTerminal(s.status) || s.status === 'unpaid') throw alreadyCanceled();
  if (s.status === 'past_due' || s.dunningOrderId !== null) throw locked('A payment is owed on this subscription; it can change product once that is settled.');
  const { product, price, amount } = await target(deps, s, productId);
  const now = (await organizationClock(deps.db, deps.clock, s.organizationId)).now();
  const [current] = await findProductsByIds(deps.db, [s.productId]);
  const moved: Subscription = { ...s, productId: product.id, priceIds: [price.id], amount, modifiedAt: now };

  let lines: Line[] = [];
  if (s.status !== 'trialing') {
    lines = prorationLines({
      periodStart: s.currentPeriodStart,
      periodEnd: s.currentPeriodEnd,
      now,
      from: { label: current?.name ?? 'previous plan', amount: s.amount, priceId: s.priceIds[0] ?? null },
      to: { label: product.name, amount, priceId: price.id },
    });
  }
  const net = lines.reduce((sum, line) => sum + line.amount, 0);
  const invoiceNow = behavior === 'invoice' && net > 0;

  // A percentage discount of the current period applies to its prorated difference too; a fixed one was taken off the period already.
  const discount = s.discountId ? ((await findDiscount(deps.db, s.discountId, [s.organizationId])) ?? null) : null;
  const periodDiscount = discount && discount.type === 'percentage' && discountApplies(discount, s.discountStart, s.currentPeriodStart) ? discount : null;
  const bill = invoiceNow ? await orderInput(deps.db, moved, lines, { discount: periodDiscount, billingReason: 'subscription_update' }) : undefined;

  let outcome: ChargeOutcome | undefined;
  const method = bill && bill.amounts.totalAmount > 0 ? await methodOf(deps, s) : undefined;
  if (bill && bill.amounts.totalAmount > 0) {
    outcome = method
      ? await deps.payments.charge({
          processorMethodId: method.processorMethodId,
          amount: bill.amounts.totalAmount,
          currency: s.currency,
          // One key per request: two identical changes at once are two charges, and the loser refunds its own.
          idempotencyKey: `subscription-change:${s.id}:${newId()}`,
          description: `Change of subscription ${s.id} to ${product.name}`,
          offSession: true,
        })
      : { status: 'failed', declineCode: 'card_declined', message: 'The customer has no saved payment method.' };
  }

  const saved = await deps.db.transaction(async (trx) => {
    const { s: locked_, clock } = await writable(trx, deps, access, id);
    if (!unchanged(s, locked_)) return { conflict: true as const };
    const payment =
      outcome &&
      (await recordPayment(trx, {
        organizationId: s.organizationId,
        customerId: s.customerId,
        processor: deps.payments.name,
        processorPaymentId: outcome.status === 'succeeded' ? outcome.processorPaymentId : null,
        amount: bill!.amounts.totalAmount,
        currency: s.currency,
        status: outcome.status,
        methodBrand: method?.brand ?? null,
        methodLast4: method?.last4 ?? null,
        declineCode: outcome.status === 'failed' ? outcome.declineCode : null,
        declineMessage: outcome.status === 'failed' ? outcome.message : null,
        createdAt: now,
      }));
    if (outcome?.status === 'failed') return { declined: outcome.message };
    const next: Subscription = { ...moved, pendingItems: invoiceNow ? s.pendingItems : [...s.pendingItems, ...lines] };
    if (bill) {
      const order = await createOrder(trx, clock, { ...bill.input, status: 'paid', paymentId: payment?.id ?? null });
      if (payment) await linkPayment(trx, payment.id, { orderId: order.id });
    }
    await commit(trx, clock, deps.baseUrl, s, next);
    return { next };
  });
  if ('conflict' in saved) {
    // Given back outside the transaction: a processor call must not hold the database.
    if (outcome?.status === 'succeeded') {
      await deps.payments.refund({ processorPaymentId: outcome.processorPaymentId, amount: bill!.amounts.totalAmount, currency: s.currency, idempotencyKey: `refund:${outcome.processorPaymentId}` });
    }
    throw locked('The subscription changed meanwhile; try again.');
  }
  // The declined attempt is on record; the subscription is as it was.
  if ('declined' in saved) throw new CoreError('payment_failed', 'SUBSCRIPTION_PAYMENT_FAILED', `The change was not made: ${saved.declined}`);
  return (await viewsOf(deps.db, [saved.next!]))[0];
}
