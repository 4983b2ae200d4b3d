import type { Knex } from 'knex';
import { fromDbBool, fromDbInt, fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import { dialectOf, type Executor } from '../../db/database.js';
import { whereMetadata } from '../../db/sql.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { Address } from '../customers/address.js';
import type { BillingReason, OrderFilter, OrderItem, OrderStatus, StoredOrder } from './schema.js';
import { orderScope, trackMetrics, trackOrder } from '../../metrics/rollups.js';

const TABLE = 'orders';
const ITEMS = 'order_items';

function toItem(row: Record<string, unknown>): OrderItem {
  return {
    id: String(row.id),
    label: String(row.label),
    amount: fromDbInt(row.amount),
    taxAmount: fromDbInt(row.tax_amount),
    proration: fromDbBool(row.proration),
    productPriceId: (row.product_price_id as string | null) ?? null,
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

function toOrder(row: Record<string, unknown>, items: OrderItem[]): StoredOrder {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    customerId: String(row.customer_id),
    productId: (row.product_id as string | null) ?? null,
    subscriptionId: (row.subscription_id as string | null) ?? null,
    checkoutId: (row.checkout_id as string | null) ?? null,
    discountId: (row.discount_id as string | null) ?? null,
    paymentId: (row.payment_id as string | null) ?? null,
    status: row.status as OrderStatus,
    billingReason: row.billing_reason as BillingReason,
    currency: String(row.currency),
    subtotalAmount: fromDbInt(row.subtotal_amount),
    discountAmount: fromDbInt(row.discount_amount),
    netAmount: fromDbInt(row.net_amount),
    taxAmount: fromDbInt(row.tax_amount),
    totalAmount: fromDbInt(row.total_amount),
    appliedBalanceAmount: fromDbInt(row.applied_balance_amount),
    refundedAmount: fromDbInt(row.refunded_amount),
    refundedTaxAmount: fromDbInt(row.refunded_tax_amount),
    platformFeeAmount: fromDbInt(row.platform_fee_amount),
    billingName: (row.billing_name as string | null) ?? null,
    billingAddress: row.billing_address === null || row.billing_address === undefined ? null : fromDbJson<Address>(row.billing_address),
    invoiceNumber: String(row.invoice_number),
    isInvoiceGenerated: fromDbBool(row.is_invoice_generated),
    metadata: fromDbJson(row.metadata),
    customFieldData: fromDbJson(row.custom_field_data),
    items,
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

async function itemsOf(db: Executor, orderIds: readonly string[]): Promise<Map<string, OrderItem[]>> {
  const byOrder = new Map<string, OrderItem[]>(orderIds.map((id) => [id, []]));
  if (orderIds.length === 0) return byOrder;
  const rows = await db(ITEMS).whereIn('order_id', orderIds).orderBy(['order_id', 'position']);
  for (const row of rows) byOrder.get(row.order_id)?.push(toItem(row));
  return byOrder;
}

/** Inserts an order and its items, and adds it to the metrics rollups (same transaction). */
export async function insertOrder(trx: Executor, order: StoredOrder): Promise<void> {
  await trackMetrics(trx, orderScope(order), () => insertOrderRows(trx, order));
}

async function insertOrderRows(trx: Executor, order: StoredOrder): Promise<void> {
  await trx(TABLE).insert({
    id: order.id,
    organization_id: order.organizationId,
    customer_id: order.customerId,
    product_id: order.productId,
    subscription_id: order.subscriptionId,
    checkout_id: order.checkoutId,
    discount_id: order.discountId,
    payment_id: order.paymentId,
    status: order.status,
    billing_reason: order.billingReason,
    currency: order.currency,
    subtotal_amount: order.subtotalAmount,
    discount_amount: order.discountAmount,
    net_amount: order.netAmount,
    tax_amount: order.taxAmount,
    total_amount: order.totalAmount,
    applied_balance_amount: order.appliedBalanceAmount,
    refunded_amount: order.refundedAmount,
    refunded_tax_amount: order.refundedTaxAmount,
    platform_fee_amount: order.platformFeeAmount,
    billing_name: order.billingName,
    billing_address: order.billingAddress ? toDbJson(order.billingAddress) : null,
    invoice_number: order.invoiceNumber,
    is_invoice_generated: order.isInvoiceGenerated,
    metadata: toDbJson(order.metadata),
    custom_field_data: toDbJson(order.customFieldData),
    created_at: toDbTime(order.createdAt),
    modified_at: toDbTimeOrNull(order.modifiedAt),
  });
  if (order.items.length) {
    await trx(ITEMS).insert(
      order.items.map((item, position) => ({
        id: item.id,
        order_id: order.id,
        label: item.label,
        amount: item.amount,
        tax_amount: item.taxAmount,
        proration: item.proration,
        product_price_id: item.productPriceId,
        position,
        created_at: toDbTime(item.createdAt),
        modified_at: toDbTimeOrNull(item.modifiedAt),
      })),
    );
  }
}

/**
 * The next invoice number of an organization, claimed by one guarded increment (the row lock on PostgreSQL,
 * the single writer on SQLite), so two concurrent orders never share a number.
 */
export async function nextInvoiceSequence(trx: Executor, organizationId: string): Promise<number> {
  await trx('invoice_counters').insert({ organization_id: organizationId, last_number: 0 }).onConflict('organization_id').ignore();
  await trx('invoice_counters').where({ organization_id: organizationId }).increment('last_number', 1);
  const row = await trx('invoice_counters').where({ organization_id: organizationId }).first('last_number');
  return fromDbInt(row.last_number);
}

/** An order of one of the organizations; `forUpdate` locks its row on PostgreSQL until the transaction ends. */
export async function findOrder(db: Executor, id: string, organizationIds: readonly string[] | null, options: { forUpdate?: boolean } = {}): Promise<StoredOrder | undefined> {
  const query = db(TABLE).where({ id });
  if (organizationIds) query.whereIn('organization_id', organizationIds);
  if (options.forUpdate && dialectOf(db) === 'postgres') query.forUpdate();
  const row = await query.first();
  return row ? toOrder(row, (await itemsOf(db, [row.id])).get(row.id) ?? []) : undefined;
}

/** Writes the billing details of an order; they only change the invoice, not the money. */
export async function saveBillingDetails(trx: Executor, order: StoredOrder): Promise<void> {
  await trx(TABLE)
    .where({ id: order.id })
    .update({
      billing_name: order.billingName,
      billing_address: order.billingAddress ? toDbJson(order.billingAddress) : null,
      modified_at: toDbTimeOrNull(order.modifiedAt),
    });
}

export async function markInvoiceGenerated(trx: Executor, id: string, at: Date): Promise<boolean> {
  return (await trx(TABLE).where({ id, is_invoice_generated: false }).update({ is_invoice_generated: true, modified_at: toDbTime(at) })) > 0;
}

/**
 * Moves an order from the status it was read in to another, with the payment that settled it. Guarded: it
 * applies only while the order is still in `from`; false otherwise (someone else changed it first).
 */
export async function updateOrderStatus(trx: Executor, id: string, from: OrderStatus, to: OrderStatus, changes: { paymentId?: string | null }, at: Date): Promise<boolean> {
  const count = await trackOrder(trx, id, () =>
    trx(TABLE)
      .where({ id, status: from })
      .update({ status: to, ...(changes.paymentId !== undefined ? { payment_id: changes.paymentId } : {}), modified_at: toDbTime(at) }),
  );
  return count > 0;
}

/**
 * Adds (or, with negative numbers, gives back) refunded amounts. Guarded compare-and-set: it applies only while
 * the order still has the refunded amount and status it was read with, and never lets the refunded amount go
 * past net + applied balance or below zero. False when another refund got there first.
 */
export async function applyRefundedAmounts(
  trx: Executor,
  order: Pick<StoredOrder, 'id' | 'status' | 'refundedAmount' | 'refundedTaxAmount'>,
  change: { amount: number; taxAmount: number; status: OrderStatus },
  at: Date,
): Promise<boolean> {
  const count = await trackOrder(trx, order.id, () =>
    trx(TABLE)
      .where({ id: order.id, status: order.status, refunded_amount: order.refundedAmount, refunded_tax_amount: order.refundedTaxAmount })
      .whereRaw('refunded_amount + ? <= net_amount + applied_balance_amount', [change.amount])
      .whereRaw('refunded_amount + ? >= 0', [change.amount])
      .whereRaw('refunded_tax_amount + ? <= tax_amount', [change.taxAmount])
      .whereRaw('refunded_tax_amount + ? >= 0', [change.taxAmount])
      .update({
        refunded_amount: order.refundedAmount + change.amount,
        refunded_tax_amount: order.refundedTaxAmount + change.taxAmount,
        status: change.status,
        modified_at: toDbTime(at),
      }),
  );
  return count > 0;
}

const SORT_COLUMNS: Record<string, string> = {
  created_at: 'orders.created_at',
  status: 'orders.status',
  invoice_number: 'orders.invoice_number',
  amount: 'orders.total_amount',
  net_amount: 'orders.net_amount',
  customer: 'sort_customer.email_lower',
  product: 'sort_product.name',
  discount: 'sort_discount.name',
  subscription: 'orders.subscription_id',
};

export async function listOrders(db: Executor, filter: OrderFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<StoredOrder>> {
  const pg = dialectOf(db) === 'postgres';
  const scoped = () => {
    const query = db(TABLE).whereIn('orders.organization_id', filter.organizationIds);
    if (filter.productIds?.length) query.whereIn('orders.product_id', filter.productIds);
    if (filter.discountIds?.length) query.whereIn('orders.discount_id', filter.discountIds);
    if (filter.customerIds?.length) query.whereIn('orders.customer_id', filter.customerIds);
    if (filter.checkoutIds?.length) query.whereIn('orders.checkout_id', filter.checkoutIds);
    if (filter.subscriptionIds?.length) query.whereIn('orders.subscription_id', filter.subscriptionIds);
    if (filter.statuses?.length) query.whereIn('orders.status', filter.statuses);
    if (filter.createdAfter) query.where('orders.created_at', '>', toDbTime(filter.createdAfter));
    if (filter.createdBefore) query.where('orders.created_at', '<', toDbTime(filter.createdBefore));
    if (filter.externalCustomerIds?.length) {
      query.whereIn('orders.customer_id', db('customers').select('id').whereIn('external_id', filter.externalCustomerIds));
    }
    if (filter.productPriceTypes?.length) {
      const types = new Set(filter.productPriceTypes);
      if (!(types.has('one_time') && types.has('recurring'))) {
        // A recurring order belongs to a subscription; a one-time order does not.
        if (types.has('recurring')) query.whereNotNull('orders.subscription_id');
        else query.whereNull('orders.subscription_id');
      }
    }
    if (filter.metadata && Object.keys(filter.metadata).length) whereMetadata(query, 'orders.metadata', pg, filter.metadata);
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped().select('orders.*');
  // Sorting by customer, product or discount goes by their email or name, as a person reads the list.
  const by = new Set(sorting.map(({ column }) => column));
  if (by.has('customer')) query.leftJoin('customers as sort_customer', 'sort_customer.id', 'orders.customer_id');
  if (by.has('product')) query.leftJoin('products as sort_product', 'sort_product.id', 'orders.product_id');
  if (by.has('discount')) query.leftJoin('discounts as sort_discount', 'sort_discount.id', 'orders.discount_id');
  for (const { column, order } of sorting) if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
  const rows = await query.orderBy('orders.id').limit(page.limit).offset(offsetOf(page));
  const items = await itemsOf(db, rows.map((row) => row.id));
  return { items: rows.map((row) => toOrder(row, items.get(row.id) ?? [])), totalCount: Number(count) };
}
