import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { paymentMethodsOf, savePaymentMethod, type Payment } from '../../payments/repository.js';
import { findOrder } from '../orders/repository.js';
import { payOwedOrder } from '../subscriptions/charge.js';
import { findSubscription } from '../subscriptions/repository.js';
import { isTerminal } from '../subscriptions/transitions.js';

/**
 * Finishes a settled pay-link payment in the settling transaction. Paid: the owed order is paid and the
 * subscription active again, as a paid renewal (the same events); the card that paid is saved and becomes the
 * subscription's, so the next renewals charge it. Paid for an order nobody waits for any more (a dunning retry
 * paid it first, the subscription ended): the money goes back. Declined or abandoned: nothing changes, dunning
 * goes on. `clock` is the organization's.
 */
export async function finishPayLinkPayment(trx: Knex.Transaction, clock: Clock, baseUrl: string, payment: Payment): Promise<{ giveBack: boolean }> {
  if (payment.status !== 'succeeded') return { giveBack: false };
  const s = payment.subscriptionId ? await findSubscription(trx, payment.subscriptionId, 'any', { forUpdate: true }) : undefined;
  const order = payment.orderId ? await findOrder(trx, payment.orderId, [payment.organizationId], { forUpdate: true }) : undefined;
  if (!s || !order || isTerminal(s.status) || s.dunningOrderId !== order.id || order.status !== 'pending') return { giveBack: true };
  const methodId = payment.savedMethodId ?? payment.processorMethodId;
  let paymentMethodId: string | null = null;
  // A token that was not turned into a reusable method (no saved method answered) cannot be charged again.
  if (methodId && !methodId.startsWith('ctoken_') && payment.methodBrand && payment.methodLast4 !== null) {
    const known = (await paymentMethodsOf(trx, s.customerId)).find((method) => method.processor === payment.processor && method.processorMethodId === methodId);
    const method =
      known ??
      (await savePaymentMethod(trx, {
        organizationId: payment.organizationId,
        customerId: s.customerId,
        processor: payment.processor,
        processorMethodId: methodId,
        processorCustomerId: payment.processorCustomerId,
        brand: payment.methodBrand,
        last4: payment.methodLast4,
        expMonth: payment.methodExpMonth,
        expYear: payment.methodExpYear,
        createdAt: clock.now(),
      }));
    paymentMethodId = method.id;
  }
  await payOwedOrder(trx, clock, baseUrl, s, order, payment.id, paymentMethodId ? { paymentMethodId } : {});
  return { giveBack: false };
}
