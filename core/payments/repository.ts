import type { Executor } from '../db/database.js';
import { fromDbInt, fromDbTime, newId, toDbTime } from '../db/columns.js';
import type { DeclineCode } from './processor.js';

export type PaymentStatus = 'succeeded' | 'failed';

/** One attempt to take money: what the processor answered, and with which method (brand and last four only). */
export interface Payment {
  id: string;
  organizationId: string;
  customerId: string | null;
  checkoutId: string | null;
  orderId: string | null;
  processor: string;
  /** The processor's id of a succeeded payment (refunds go through it); null when declined. */
  processorPaymentId: string | null;
  amount: number;
  currency: string;
  status: PaymentStatus;
  methodBrand: string | null;
  methodLast4: string | null;
  declineCode: DeclineCode | null;
  declineMessage: string | null;
  createdAt: Date;
}

/** A method saved with the processor for off-session charges (renewals, dunning). */
export interface PaymentMethod {
  id: string;
  organizationId: string;
  customerId: string;
  processor: string;
  processorMethodId: string;
  brand: string;
  last4: string;
  expMonth: number | null;
  expYear: number | null;
  createdAt: Date;
}

function toPayment(row: Record<string, unknown>): Payment {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    customerId: (row.customer_id as string | null) ?? null,
    checkoutId: (row.checkout_id as string | null) ?? null,
    orderId: (row.order_id as string | null) ?? null,
    processor: String(row.processor),
    processorPaymentId: (row.processor_payment_id as string | null) ?? null,
    amount: fromDbInt(row.amount),
    currency: String(row.currency),
    status: row.status as PaymentStatus,
    methodBrand: (row.method_brand as string | null) ?? null,
    methodLast4: (row.method_last4 as string | null) ?? null,
    declineCode: (row.decline_code as DeclineCode | null) ?? null,
    declineMessage: (row.decline_message as string | null) ?? null,
    createdAt: fromDbTime(row.created_at),
  };
}

function toPaymentMethod(row: Record<string, unknown>): PaymentMethod {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    customerId: String(row.customer_id),
    processor: String(row.processor),
    processorMethodId: String(row.processor_method_id),
    brand: String(row.brand),
    last4: String(row.last4),
    expMonth: row.exp_month === null ? null : fromDbInt(row.exp_month),
    expYear: row.exp_year === null ? null : fromDbInt(row.exp_year),
    createdAt: fromDbTime(row.created_at),
  };
}

/** Records a payment attempt (succeeded or declined) and answers it with its new id. */
export async function recordPayment(
  trx: Executor,
  payment: Omit<Payment, 'id' | 'orderId' | 'checkoutId'> & { orderId?: string | null; checkoutId?: string | null },
): Promise<Payment> {
  const stored: Payment = { ...payment, id: newId(), orderId: payment.orderId ?? null, checkoutId: payment.checkoutId ?? null };
  await trx('payments').insert({
    id: stored.id,
    organization_id: stored.organizationId,
    customer_id: stored.customerId,
    checkout_id: stored.checkoutId,
    order_id: stored.orderId,
    processor: stored.processor,
    processor_payment_id: stored.processorPaymentId,
    amount: stored.amount,
    currency: stored.currency,
    status: stored.status,
    method_brand: stored.methodBrand,
    method_last4: stored.methodLast4,
    decline_code: stored.declineCode,
    decline_message: stored.declineMessage,
    created_at: toDbTime(stored.createdAt),
  });
  return stored;
}

/** Links a payment to what it paid for, once that exists (the order made in the same transaction). */
export async function linkPayment(trx: Executor, paymentId: string, link: { orderId?: string; customerId?: string }): Promise<void> {
  await trx('payments')
    .where({ id: paymentId })
    .update({ ...(link.orderId ? { order_id: link.orderId } : {}), ...(link.customerId ? { customer_id: link.customerId } : {}) });
}

export async function findPayment(db: Executor, id: string): Promise<Payment | undefined> {
  const row = await db('payments').where({ id }).first();
  return row ? toPayment(row) : undefined;
}

export async function paymentsOfCheckout(db: Executor, checkoutId: string): Promise<Payment[]> {
  const rows = await db('payments').where({ checkout_id: checkoutId }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(toPayment);
}

/** Saves a method for a customer (the processor has already checked it). */
export async function savePaymentMethod(trx: Executor, method: Omit<PaymentMethod, 'id'>): Promise<PaymentMethod> {
  const stored: PaymentMethod = { ...method, id: newId() };
  await trx('payment_methods').insert({
    id: stored.id,
    organization_id: stored.organizationId,
    customer_id: stored.customerId,
    processor: stored.processor,
    processor_method_id: stored.processorMethodId,
    brand: stored.brand,
    last4: stored.last4,
    exp_month: stored.expMonth,
    exp_year: stored.expYear,
    created_at: toDbTime(stored.createdAt),
  });
  return stored;
}

export async function findPaymentMethod(db: Executor, id: string): Promise<PaymentMethod | undefined> {
  const row = await db('payment_methods').where({ id }).first();
  return row ? toPaymentMethod(row) : undefined;
}

/** A customer's saved methods, newest first (the one a renewal charges when the subscription names none). */
export async function paymentMethodsOf(db: Executor, customerId: string): Promise<PaymentMethod[]> {
  const rows = await db('payment_methods').where({ customer_id: customerId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }]);
  return rows.map(toPaymentMethod);
}
