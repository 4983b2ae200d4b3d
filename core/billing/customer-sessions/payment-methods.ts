import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { organizationClock } from '../../jobs/clock.js';
import type { ProcessorChoice } from '../../payments/select.js';
import { announceCustomerUpdated } from '../customers/service.js';
import { CoreError } from '../../errors.js';
import { deletePaymentMethodOf, findPaymentMethod, listPaymentMethodsOf, paymentMethodsOf, type PaymentMethod } from '../../payments/repository.js';
import { findCustomers } from '../customers/repository.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import { subscriptionsOfCustomer } from '../subscriptions/repository.js';
import { BILLABLE_STATUSES } from '../subscriptions/schema.js';
import type { CustomerPrincipal } from './service.js';

const methodNotFound = () => new CoreError('not_found', 'PAYMENT_METHOD_NOT_FOUND', 'Payment method not found');

/** The session customer's saved methods, newest (the default, which renewals charge) first. */
export function listOwnPaymentMethods(db: Database, customer: CustomerPrincipal, page: PageQuery): Promise<Page<PaymentMethod>> {
  return listPaymentMethodsOf(db, customer.customerId, page);
}

/**
 * Deletes one of the session customer's saved methods, unless it is the last one while a subscription is still
 * billed (trialing, active or past due): its next charge would have nothing to charge (400, Polar's
 * PaymentMethodInUseByActiveSubscription). A subscription that named the deleted method is charged with the newest
 * one left. The customer row is locked so two deletes cannot each leave the other as the last. The method is
 * detached at its processor too (Stripe), before it is deleted here, as Polar does: a processor that fails leaves
 * it saved. Emits customer.updated and customer.state_changed, as Polar.
 */
export async function deleteOwnPaymentMethod(deps: { db: Database; clock: Clock } & ProcessorChoice, customer: CustomerPrincipal, id: string): Promise<void> {
  const clock = await organizationClock(deps.db, deps.clock, customer.organizationId);
  await deps.db.transaction(async (trx) => {
    const [me] = await findCustomers(trx, { id: customer.customerId }, [customer.organizationId], { forUpdate: true });
    const method = me ? await findPaymentMethod(trx, id) : undefined;
    if (!method || method.customerId !== customer.customerId) throw methodNotFound();
    const others = (await paymentMethodsOf(trx, customer.customerId)).filter((other) => other.id !== id);
    if (others.length === 0 && (await subscriptionsOfCustomer(trx, customer.customerId, BILLABLE_STATUSES)).length > 0) {
      throw new CoreError('conflict', 'PAYMENT_METHOD_IN_USE', 'This is the only payment method of an active subscription: add another one before deleting it, or cancel the subscription.');
    }
    const processor = [deps.payments, deps.livePayments].find((candidate) => candidate?.name === method.processor);
    if (processor) await processor.detachMethod(method);
    if (!(await deletePaymentMethodOf(trx, customer.customerId, id))) throw methodNotFound();
    await announceCustomerUpdated(trx, clock, me!);
  });
}
