import { fromDbBool, fromDbInt, fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import type { Executor } from '../../db/database.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { Refund, RefundFilter, RefundReason, RefundStatus } from './schema.js';

const TABLE = 'refunds';

function toRefund(row: Record<string, unknown>): Refund {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    orderId: String(row.order_id),
    subscriptionId: (row.subscription_id as string | null) ?? null,
    customerId: String(row.customer_id),
    paymentId: (row.payment_id as string | null) ?? null,
    status: row.status as RefundStatus,
    reason: row.reason as RefundReason,
    amount: fromDbInt(row.amount),
    taxAmount: fromDbInt(row.tax_amount),
    currency: String(row.currency),
    comment: (row.comment as string | null) ?? null,
    revokeBenefits: fromDbBool(row.revoke_benefits),
    processorRefundId: (row.processor_refund_id as string | null) ?? null,
    failureReason: (row.failure_reason as string | null) ?? null,
    metadata: fromDbJson(row.metadata),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

export async function insertRefund(trx: Executor, refund: Refund): Promise<void> {
  await trx(TABLE).insert({
    id: refund.id,
    organization_id: refund.organizationId,
    order_id: refund.orderId,
    subscription_id: refund.subscriptionId,
    customer_id: refund.customerId,
    payment_id: refund.paymentId,
    status: refund.status,
    reason: refund.reason,
    amount: refund.amount,
    tax_amount: refund.taxAmount,
    currency: refund.currency,
    comment: refund.comment,
    revoke_benefits: refund.revokeBenefits,
    processor_refund_id: refund.processorRefundId,
    failure_reason: refund.failureReason,
    metadata: toDbJson(refund.metadata),
    created_at: toDbTime(refund.createdAt),
    modified_at: toDbTimeOrNull(refund.modifiedAt),
  });
}

/** Settles a pending refund; guarded on the status it was read in, so it is settled once. */
export async function settleRefund(trx: Executor, refund: Refund, from: RefundStatus): Promise<boolean> {
  const count = await trx(TABLE).where({ id: refund.id, status: from }).update({
    status: refund.status,
    processor_refund_id: refund.processorRefundId,
    failure_reason: refund.failureReason,
    modified_at: toDbTimeOrNull(refund.modifiedAt),
  });
  return count > 0;
}

export async function findRefund(db: Executor, id: string): Promise<Refund | undefined> {
  const row = await db(TABLE).where({ id }).first();
  return row ? toRefund(row) : undefined;
}

/** The refund a processor event names, by the processor's refund id. */
export async function findRefundByProcessorId(db: Executor, processorRefundId: string): Promise<Refund | undefined> {
  const row = await db(TABLE).where({ processor_refund_id: processorRefundId }).first();
  return row ? toRefund(row) : undefined;
}

/** The refunds of one order, oldest first (the invoice lists them). */
export async function refundsOfOrder(db: Executor, orderId: string): Promise<Refund[]> {
  return (await db(TABLE).where({ order_id: orderId }).orderBy([{ column: 'created_at' }, { column: 'id' }])).map(toRefund);
}

const SORT_COLUMNS: Record<string, string> = { created_at: 'refunds.created_at', amount: 'refunds.amount' };

export async function listRefunds(db: Executor, filter: RefundFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<Refund>> {
  const scoped = () => {
    const query = db(TABLE).whereIn('refunds.organization_id', filter.organizationIds);
    if (filter.ids?.length) query.whereIn('refunds.id', filter.ids);
    if (filter.orderIds?.length) query.whereIn('refunds.order_id', filter.orderIds);
    if (filter.subscriptionIds?.length) query.whereIn('refunds.subscription_id', filter.subscriptionIds);
    if (filter.customerIds?.length) query.whereIn('refunds.customer_id', filter.customerIds);
    if (filter.externalCustomerIds?.length) {
      query.whereIn('refunds.customer_id', db('customers').select('id').whereIn('external_id', filter.externalCustomerIds).whereIn('organization_id', filter.organizationIds));
    }
    if (filter.succeeded === true) query.where('refunds.status', 'succeeded');
    if (filter.succeeded === false) query.whereNot('refunds.status', 'succeeded');
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped().select('refunds.*');
  for (const { column, order } of sorting) if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
  const rows = await query.orderBy('refunds.id').limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toRefund), totalCount: Number(count) };
}
