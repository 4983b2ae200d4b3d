import type { Executor } from '../db/database.js';
import { fromDbBool, fromDbInt, fromDbJson, fromDbTime, fromDbTimeOrNull, newId, toDbJson, toDbTime, toDbTimeOrNull } from '../db/columns.js';
import { dialectOf } from '../db/database.js';

/**
 * An intent's life (core/payments/processor.ts): `created` when written with its claim, before the processor is
 * called; then the processor's answer. `requires_action` and `processing` wait for a later answer; `succeeded`
 * and `failed` are final.
 */
export const PAYMENT_STATUSES = ['created', 'requires_action', 'processing', 'succeeded', 'failed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const PAYMENT_TRANSITIONS: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = {
  created: ['requires_action', 'processing', 'succeeded', 'failed'],
  requires_action: ['processing', 'succeeded', 'failed'],
  processing: ['succeeded', 'failed'],
  succeeded: [],
  failed: [],
};

export const canPaymentTransition = (from: PaymentStatus, to: PaymentStatus): boolean => PAYMENT_TRANSITIONS[from].includes(to);
export const isSettledPayment = (status: PaymentStatus): boolean => PAYMENT_TRANSITIONS[status].length === 0;

/**
 * What an intent pays for, so that its settlement knows what to finish. `pay_link`: the customer paying a
 * subscription's owed order on-session from the link mailed after a declined renewal (core/billing/pay-links); it
 * is no dunning attempt (its `attempt` is null), so it never takes the place of one.
 */
export type PaymentPurpose = 'checkout' | 'subscription' | 'subscription_update' | 'pay_link';

/** One attempt to take money: the intent as written before the processor was asked, and what it answered. */
export interface Payment {
  id: string;
  organizationId: string;
  customerId: string | null;
  checkoutId: string | null;
  orderId: string | null;
  subscriptionId: string | null;
  purpose: PaymentPurpose;
  /** Which try at the subscription's owed order this is (0 first, then one per dunning retry); null otherwise. */
  attempt: number | null;
  processor: string;
  /** Sent with every call about this intent; unique, so one intent is one charge. */
  idempotencyKey: string;
  /** The processor's id of the intent once it answered (refunds go through it); null before, or when refused outright. */
  processorPaymentId: string | null;
  processorMethodId: string | null;
  processorCustomerId: string | null;
  /** The method the processor saved for later charges, when the charge was made from a token. */
  savedMethodId: string | null;
  amount: number;
  currency: string;
  status: PaymentStatus;
  offSession: boolean;
  description: string;
  returnUrl: string | null;
  /** Where the customer authenticates (requires_action). */
  redirectUrl: string | null;
  methodBrand: string | null;
  methodLast4: string | null;
  methodExpMonth: number | null;
  methodExpYear: number | null;
  declineCode: string | null;
  declineMessage: string | null;
  /** A plan change waiting for this payment (purpose subscription_update). */
  plan: Record<string, unknown> | null;
  createdAt: Date;
  modifiedAt: Date | null;
}

/** A method saved with the processor for off-session charges (renewals, dunning). */
export interface PaymentMethod {
  id: string;
  organizationId: string;
  customerId: string;
  processor: string;
  processorMethodId: string;
  processorCustomerId: string | null;
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
    subscriptionId: (row.subscription_id as string | null) ?? null,
    purpose: (row.purpose as PaymentPurpose | null) ?? (row.checkout_id ? 'checkout' : 'subscription'),
    attempt: row.attempt === null || row.attempt === undefined ? null : fromDbInt(row.attempt),
    processor: String(row.processor),
    idempotencyKey: String(row.idempotency_key ?? `till_${row.id}`),
    processorPaymentId: (row.processor_payment_id as string | null) ?? null,
    processorMethodId: (row.processor_method_id as string | null) ?? null,
    processorCustomerId: (row.processor_customer_id as string | null) ?? null,
    savedMethodId: (row.saved_method_id as string | null) ?? null,
    amount: fromDbInt(row.amount),
    currency: String(row.currency),
    status: row.status as PaymentStatus,
    offSession: row.off_session === null || row.off_session === undefined ? false : fromDbBool(row.off_session),
    description: (row.description as string | null) ?? '',
    returnUrl: (row.return_url as string | null) ?? null,
    redirectUrl: (row.redirect_url as string | null) ?? null,
    methodBrand: (row.method_brand as string | null) ?? null,
    methodLast4: (row.method_last4 as string | null) ?? null,
    methodExpMonth: row.method_exp_month === null || row.method_exp_month === undefined ? null : fromDbInt(row.method_exp_month),
    methodExpYear: row.method_exp_year === null || row.method_exp_year === undefined ? null : fromDbInt(row.method_exp_year),
    declineCode: (row.decline_code as string | null) ?? null,
    declineMessage: (row.decline_message as string | null) ?? null,
    plan: row.plan === null || row.plan === undefined ? null : fromDbJson(row.plan),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

function toPaymentMethod(row: Record<string, unknown>): PaymentMethod {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    customerId: String(row.customer_id),
    processor: String(row.processor),
    processorMethodId: String(row.processor_method_id),
    processorCustomerId: (row.processor_customer_id as string | null) ?? null,
    brand: String(row.brand),
    last4: String(row.last4),
    expMonth: row.exp_month === null ? null : fromDbInt(row.exp_month),
    expYear: row.exp_year === null ? null : fromDbInt(row.exp_year),
    createdAt: fromDbTime(row.created_at),
  };
}

/** What an intent row is written with; everything the processor will answer starts empty. */
export type NewPayment = Omit<Payment, 'id' | 'idempotencyKey' | 'status' | 'processorPaymentId' | 'savedMethodId' | 'redirectUrl' | 'declineCode' | 'declineMessage' | 'modifiedAt'> &
  Partial<Pick<Payment, 'status' | 'declineCode' | 'declineMessage'>>;

/**
 * Writes an intent (status `created`, or `failed` for an attempt refused before any processor call), with its
 * idempotency key derived from its id. Call it in the transaction of the claim it pays for.
 */
export async function insertPayment(trx: Executor, payment: NewPayment): Promise<Payment> {
  const id = newId();
  const stored: Payment = {
    ...payment,
    id,
    idempotencyKey: `till_${id}`,
    status: payment.status ?? 'created',
    processorPaymentId: null,
    savedMethodId: null,
    redirectUrl: null,
    declineCode: payment.declineCode ?? null,
    declineMessage: payment.declineMessage ?? null,
    modifiedAt: null,
  };
  await trx('payments').insert({
    id: stored.id,
    organization_id: stored.organizationId,
    customer_id: stored.customerId,
    checkout_id: stored.checkoutId,
    order_id: stored.orderId,
    subscription_id: stored.subscriptionId,
    purpose: stored.purpose,
    attempt: stored.attempt,
    processor: stored.processor,
    idempotency_key: stored.idempotencyKey,
    processor_payment_id: null,
    processor_method_id: stored.processorMethodId,
    processor_customer_id: stored.processorCustomerId,
    amount: stored.amount,
    currency: stored.currency,
    status: stored.status,
    off_session: stored.offSession,
    description: stored.description,
    return_url: stored.returnUrl,
    method_brand: stored.methodBrand,
    method_last4: stored.methodLast4,
    method_exp_month: stored.methodExpMonth,
    method_exp_year: stored.methodExpYear,
    decline_code: stored.declineCode,
    decline_message: stored.declineMessage,
    plan: stored.plan === null ? null : toDbJson(stored.plan),
    created_at: toDbTime(stored.createdAt),
  });
  return stored;
}

/** What a processor's answer changes on an intent row. */
export type PaymentSettlement = Pick<Payment, 'status' | 'processorPaymentId' | 'savedMethodId' | 'redirectUrl' | 'declineCode' | 'declineMessage' | 'modifiedAt'>;

/** Moves an intent along PAYMENT_TRANSITIONS, guarded on the status it was read in; false when it moved meanwhile. */
export async function transitionPayment(trx: Executor, payment: Payment, next: PaymentSettlement): Promise<boolean> {
  if (!canPaymentTransition(payment.status, next.status)) throw new Error(`payment ${payment.id} cannot go from ${payment.status} to ${next.status}`);
  const count = await trx('payments').where({ id: payment.id, status: payment.status }).update({
    status: next.status,
    processor_payment_id: next.processorPaymentId,
    saved_method_id: next.savedMethodId,
    redirect_url: next.redirectUrl,
    decline_code: next.declineCode,
    decline_message: next.declineMessage,
    modified_at: toDbTimeOrNull(next.modifiedAt),
  });
  return count > 0;
}

/** Sets where the customer comes back to after authenticating, when that URL names the payment itself. */
export async function setPaymentReturnUrl(trx: Executor, paymentId: string, returnUrl: string): Promise<void> {
  await trx('payments').where({ id: paymentId }).update({ return_url: returnUrl });
}

/** Links a payment to what it paid for, once that exists (the order made in the same transaction). */
export async function linkPayment(trx: Executor, paymentId: string, link: { orderId?: string; customerId?: string }): Promise<void> {
  await trx('payments')
    .where({ id: paymentId })
    .update({ ...(link.orderId ? { order_id: link.orderId } : {}), ...(link.customerId ? { customer_id: link.customerId } : {}) });
}

export async function findPayment(db: Executor, id: string, options: { forUpdate?: boolean } = {}): Promise<Payment | undefined> {
  const query = db('payments').where({ id });
  if (options.forUpdate && dialectOf(db) === 'postgres') query.forUpdate();
  const row = await query.first();
  return row ? toPayment(row) : undefined;
}

/** The intent a processor event names, by the processor's intent id. */
export async function findPaymentByProcessorId(db: Executor, processor: string, processorPaymentId: string): Promise<Payment | undefined> {
  const row = await db('payments').where({ processor, processor_payment_id: processorPaymentId }).first();
  return row ? toPayment(row) : undefined;
}

export async function paymentsOfCheckout(db: Executor, checkoutId: string): Promise<Payment[]> {
  const rows = await db('payments').where({ checkout_id: checkoutId }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(toPayment);
}

/** The try at a subscription's owed order, if it was made (one row per order and attempt). */
export async function paymentOfAttempt(db: Executor, orderId: string, attempt: number): Promise<Payment | undefined> {
  const row = await db('payments').where({ order_id: orderId, attempt, purpose: 'subscription' }).first();
  return row ? toPayment(row) : undefined;
}

/** Intents of a subscription still waiting for the processor (a plan change in flight blocks another). */
export async function unsettledPaymentsOfSubscription(db: Executor, subscriptionId: string): Promise<Payment[]> {
  const rows = await db('payments').where({ subscription_id: subscriptionId }).whereIn('status', ['created', 'requires_action', 'processing']);
  return rows.map(toPayment);
}

/** Intents for an order still waiting for the processor, of any purpose (a dunning try and a pay link never overlap). */
export async function unsettledPaymentsOfOrder(db: Executor, orderId: string): Promise<Payment[]> {
  const rows = await db('payments').where({ order_id: orderId }).whereIn('status', ['created', 'requires_action', 'processing']);
  return rows.map(toPayment);
}

/** The intents of an order made through one purpose, oldest first (a pay link's tries). */
export async function paymentsOfOrder(db: Executor, orderId: string, purpose: PaymentPurpose): Promise<Payment[]> {
  const rows = await db('payments').where({ order_id: orderId, purpose }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
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
    processor_customer_id: stored.processorCustomerId,
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

/** What GET /v1/payments filters on: Polar's filters, over the organizations the caller may read. */
export interface PaymentFilter {
  organizationIds: readonly string[];
  checkoutIds?: readonly string[];
  orderIds?: readonly string[];
  customerIds?: readonly string[];
  /** Polar's statuses: `pending` is every intent still waiting for the processor. */
  statuses?: readonly ('pending' | 'succeeded' | 'failed')[];
  methods?: readonly string[];
  customerEmails?: readonly string[];
}

const PAYMENT_SORT_COLUMNS: Record<string, string> = { created_at: 'payments.created_at', status: 'payments.status', amount: 'payments.amount', method: 'payments.method_brand' };
const PENDING: readonly PaymentStatus[] = ['created', 'requires_action', 'processing'];

export async function listPayments(db: Executor, filter: PaymentFilter, sorting: readonly { column: string; order: 'asc' | 'desc' }[], page: { page: number; limit: number }): Promise<{ items: Payment[]; totalCount: number }> {
  const scoped = () => {
    const query = db('payments').whereIn('payments.organization_id', filter.organizationIds);
    if (filter.checkoutIds?.length) query.whereIn('payments.checkout_id', filter.checkoutIds);
    if (filter.orderIds?.length) query.whereIn('payments.order_id', filter.orderIds);
    if (filter.customerIds?.length) query.whereIn('payments.customer_id', filter.customerIds);
    if (filter.statuses?.length) query.whereIn('payments.status', filter.statuses.flatMap((status) => (status === 'pending' ? PENDING : [status])));
    // Every method Till takes is a card; a payment made without one (no saved method) has none.
    if (filter.methods?.length) {
      if (filter.methods.includes('card')) query.whereNotNull('payments.method_brand');
      else query.whereRaw('1 = 0');
    }
    if (filter.customerEmails?.length) {
      query.whereIn('payments.customer_id', db('customers').select('id').whereIn('email', filter.customerEmails).whereIn('organization_id', filter.organizationIds));
    }
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped().select('payments.*');
  for (const { column, order } of sorting) if (PAYMENT_SORT_COLUMNS[column]) query.orderBy(PAYMENT_SORT_COLUMNS[column], order);
  const rows = await query.orderBy('payments.id').limit(page.limit).offset((page.page - 1) * page.limit);
  return { items: rows.map(toPayment), totalCount: Number(count) };
}

/** A customer's saved methods, a page of them, newest first. */
export async function listPaymentMethodsOf(db: Executor, customerId: string, page: { page: number; limit: number }): Promise<{ items: PaymentMethod[]; totalCount: number }> {
  const [{ count }] = await db('payment_methods').where({ customer_id: customerId }).count<{ count: number | string }[]>({ count: '*' });
  const rows = await db('payment_methods')
    .where({ customer_id: customerId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
    .limit(page.limit)
    .offset((page.page - 1) * page.limit);
  return { items: rows.map(toPaymentMethod), totalCount: Number(count) };
}

/** Deletes one saved method of a customer; false when it was not theirs or already gone. */
export async function deletePaymentMethodOf(trx: Executor, customerId: string, id: string): Promise<boolean> {
  return (await trx('payment_methods').where({ id, customer_id: customerId }).delete()) > 0;
}
