import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { findPayment, listPaymentMethodsOf, listPayments as listRows, type Payment, type PaymentFilter, type PaymentMethod } from '../../payments/repository.js';
import { getCustomer } from '../customers/service.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';

export const paymentNotFound = () => new CoreError('not_found', 'PAYMENT_NOT_FOUND', 'Payment not found');

/** Every attempt to take money in the organizations the caller may read, filtered as Polar's list is. */
export async function listPayments(db: Database, filter: PaymentFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<Payment>> {
  return listRows(db, filter, sorting, page);
}

/** One payment, if its organization is readable. */
export async function getPayment(db: Database, readable: ReadonlySet<string>, id: string): Promise<Payment> {
  const payment = await findPayment(db, id);
  if (!payment || !readable.has(payment.organizationId)) throw paymentNotFound();
  return payment;
}

/** A customer's saved payment methods (by id or external id, in an organization the caller may read). */
export async function listCustomerPaymentMethods(
  db: Database,
  readable: ReadonlySet<string>,
  key: Parameters<typeof getCustomer>[2],
  page: PageQuery,
): Promise<Page<PaymentMethod>> {
  const customer = await getCustomer(db, readable, key);
  return listPaymentMethodsOf(db, customer.id, page);
}
