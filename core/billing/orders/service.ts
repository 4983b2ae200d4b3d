import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database, Executor } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { recordEvent, type WebhookEventType } from '../../webhooks/outbox.js';
import type { Address } from '../customers/address.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { loadRelations, type OrderRelations } from './relations.js';
import { findOrder, insertOrder, listOrders as listRows, nextInvoiceSequence, saveBillingDetails, updateOrderStatus } from './repository.js';
import { canTransition, type OrderCreateInput, type OrderFilter, type OrderUpdate, type StoredOrder } from './schema.js';
import { serializeOrder } from './serialize.js';

/** An order with what it embeds, ready to serialize. */
export interface OrderView {
  order: StoredOrder;
  relations: OrderRelations;
}

export interface Access {
  read: ReadonlySet<string>;
  write: ReadonlySet<string>;
}

export const orderNotFound = () => new CoreError('not_found', 'ORDER_NOT_FOUND', 'Order not found');

export const serializeOrderView = (view: OrderView) => serializeOrder(view.order, view.relations);

export async function viewsOf(db: Executor, orders: StoredOrder[]): Promise<OrderView[]> {
  const relations = await loadRelations(db, orders);
  return orders.map((order) => ({ order, relations }));
}

/** Records order events carrying the order exactly as the API answers it, in the change's transaction. */
export async function recordOrderEvents(trx: Knex.Transaction, clock: Clock, order: StoredOrder, types: WebhookEventType[]): Promise<void> {
  const [view] = await viewsOf(trx, [order]);
  const data = serializeOrderView(view);
  for (const type of types) await recordEvent(trx, clock, { organizationId: order.organizationId, type, data });
}

/** `ACME-0042`: the organization's slug (letters and digits, upper-cased, at most 12) and its next number. */
async function nextInvoiceNumber(trx: Executor, organizationId: string): Promise<string> {
  const organization = await trx('organization').where({ id: organizationId }).first('slug');
  const prefix = String(organization?.slug ?? 'TILL').toUpperCase().replace(/[^A-Z0-9]/g, '').slice(0, 12) || 'TILL';
  const sequence = await nextInvoiceSequence(trx, organizationId);
  return `${prefix}-${String(sequence).padStart(4, '0')}`;
}

const bad = (message: string) => new CoreError('invalid', 'INVALID_ORDER', message);

/** The amounts of an order must add up; a mismatch is a bug in the caller, refused before anything is written. */
function checkAmounts(input: OrderCreateInput): void {
  const amounts = [input.subtotalAmount, input.discountAmount, input.netAmount, input.taxAmount, input.totalAmount];
  if (!amounts.every((n) => Number.isSafeInteger(n) && n >= 0)) throw bad('Order amounts must be non-negative integers in minor units');
  if (input.items.length === 0) throw bad('An order needs at least one item');
  for (const item of input.items) {
    if (!Number.isSafeInteger(item.amount) || !Number.isSafeInteger(item.taxAmount)) throw bad('Item amounts must be integers in minor units');
  }
  const itemsTotal = input.items.reduce((sum, item) => sum + item.amount, 0);
  if (itemsTotal !== input.subtotalAmount) throw bad(`The items add up to ${itemsTotal}, not the subtotal ${input.subtotalAmount}`);
  if (input.discountAmount > input.subtotalAmount) throw bad('The discount exceeds the subtotal');
  if (input.subtotalAmount - input.discountAmount !== input.netAmount) throw bad('net_amount must be subtotal_amount − discount_amount');
  if (input.netAmount + input.taxAmount !== input.totalAmount) throw bad('total_amount must be net_amount + tax_amount');
  if (!/^[a-z]{3}$/.test(input.currency)) throw bad('currency must be a lower-case ISO 4217 code');
}

/**
 * Creates an order inside the caller's transaction (checkout fulfilment, a renewal, a plan change) and emits
 * order.created, plus order.paid when it is created paid. `clock` is the organization's clock.
 */
export async function createOrder(trx: Knex.Transaction, clock: Clock, input: OrderCreateInput): Promise<{ id: string; status: string }> {
  checkAmounts(input);
  const customer = await trx('customers').where({ id: input.customerId, organization_id: input.organizationId }).first('id');
  if (!customer) throw bad('The order’s customer is not a customer of the organization');
  const now = clock.now();
  const order: StoredOrder = {
    id: newId(),
    organizationId: input.organizationId,
    customerId: input.customerId,
    productId: input.productId,
    subscriptionId: input.subscriptionId,
    checkoutId: input.checkoutId,
    discountId: input.discountId,
    paymentId: input.paymentId,
    status: input.status,
    billingReason: input.billingReason,
    currency: input.currency,
    subtotalAmount: input.subtotalAmount,
    discountAmount: input.discountAmount,
    netAmount: input.netAmount,
    taxAmount: input.taxAmount,
    totalAmount: input.totalAmount,
    appliedBalanceAmount: 0,
    refundedAmount: 0,
    refundedTaxAmount: 0,
    platformFeeAmount: 0,
    billingName: input.billingName,
    billingAddress: (input.billingAddress as Address | null) ?? null,
    invoiceNumber: await nextInvoiceNumber(trx, input.organizationId),
    isInvoiceGenerated: false,
    metadata: input.metadata,
    customFieldData: input.customFieldData,
    items: input.items.map((item) => ({ ...item, id: newId(), createdAt: now, modifiedAt: null })),
    createdAt: now,
    modifiedAt: null,
  };
  await insertOrder(trx, order);
  await recordOrderEvents(trx, clock, order, order.status === 'paid' ? ['order.created', 'order.paid'] : ['order.created']);
  return { id: order.id, status: order.status };
}

/** pending → paid once its payment succeeded (a renewal retried by dunning); emits order.updated and order.paid. */
export async function markOrderPaid(trx: Knex.Transaction, clock: Clock, orderId: string, paymentId: string): Promise<void> {
  const order = await findOrder(trx, orderId, null, { forUpdate: true });
  if (!order) throw orderNotFound();
  if (!canTransition(order.status, 'paid')) throw new CoreError('conflict', 'ORDER_NOT_PENDING', `The order is ${order.status}, not pending`);
  const now = clock.now();
  if (!(await updateOrderStatus(trx, order.id, order.status, 'paid', { paymentId }, now))) {
    throw new CoreError('conflict', 'ORDER_CHANGED', 'The order changed meanwhile; try again');
  }
  await recordOrderEvents(trx, clock, { ...order, status: 'paid', paymentId, modifiedAt: now }, ['order.updated', 'order.paid']);
}

export async function getOrder(db: Database, readable: ReadonlySet<string>, id: string): Promise<OrderView> {
  const order = await findOrder(db, id, [...readable]);
  if (!order) throw orderNotFound();
  return (await viewsOf(db, [order]))[0];
}

export async function listOrders(db: Database, filter: OrderFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<OrderView>> {
  const rows = await listRows(db, filter, sorting, page);
  return { items: await viewsOf(db, rows.items), totalCount: rows.totalCount };
}

/** Changes the name and address the invoice shows; emits order.updated. */
export async function updateOrder(db: Database, baseClock: Clock, access: Access, id: string, input: OrderUpdate): Promise<OrderView> {
  return db.transaction(async (trx) => {
    const current = await findOrder(trx, id, [...access.read], { forUpdate: true });
    if (!current) throw orderNotFound();
    if (!access.write.has(current.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this order but not change it');
    const clock = await organizationClock(trx, baseClock, current.organizationId);
    const next: StoredOrder = {
      ...current,
      billingName: input.billing_name === undefined ? current.billingName : input.billing_name || null,
      billingAddress: input.billing_address === undefined ? current.billingAddress : input.billing_address,
      modifiedAt: clock.now(),
    };
    await saveBillingDetails(trx, next);
    await recordOrderEvents(trx, clock, next, ['order.updated']);
    return (await viewsOf(trx, [next]))[0];
  });
}
