import { fromDbBool, fromDbInt, fromDbTime, fromDbTimeOrNull, newId, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import { dialectOf, type Executor } from '../../db/database.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { Dispute, DisputeFilter, DisputeStatus } from './schema.js';

const TABLE = 'disputes';

function toDispute(row: Record<string, unknown>): Dispute {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    orderId: String(row.order_id),
    paymentId: String(row.payment_id),
    customerId: String(row.customer_id),
    processor: String(row.processor),
    processorDisputeId: String(row.processor_dispute_id),
    status: row.status as DisputeStatus,
    reason: (row.reason as string | null) ?? null,
    amount: fromDbInt(row.amount),
    taxAmount: fromDbInt(row.tax_amount),
    currency: String(row.currency),
    evidenceDueBy: fromDbTimeOrNull(row.evidence_due_by),
    pastDue: fromDbBool(row.past_due),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

/** Records a dispute the first time the processor tells of it; answers the stored one (a repeat inserts nothing). */
export async function insertDispute(trx: Executor, dispute: Omit<Dispute, 'id'>): Promise<Dispute> {
  const id = newId();
  await trx(TABLE)
    .insert({
      id,
      organization_id: dispute.organizationId,
      order_id: dispute.orderId,
      payment_id: dispute.paymentId,
      customer_id: dispute.customerId,
      processor: dispute.processor,
      processor_dispute_id: dispute.processorDisputeId,
      status: dispute.status,
      reason: dispute.reason,
      amount: dispute.amount,
      tax_amount: dispute.taxAmount,
      currency: dispute.currency,
      evidence_due_by: toDbTimeOrNull(dispute.evidenceDueBy),
      past_due: dispute.pastDue,
      created_at: toDbTime(dispute.createdAt),
      modified_at: toDbTimeOrNull(dispute.modifiedAt),
    })
    .onConflict(['processor', 'processor_dispute_id'])
    .ignore();
  return (await findDisputeByProcessorId(trx, dispute.processor, dispute.processorDisputeId, { forUpdate: true }))!;
}

export async function findDisputeByProcessorId(db: Executor, processor: string, processorDisputeId: string, options: { forUpdate?: boolean } = {}): Promise<Dispute | undefined> {
  const query = db(TABLE).where({ processor, processor_dispute_id: processorDisputeId });
  if (options.forUpdate && dialectOf(db) === 'postgres') query.forUpdate();
  const row = await query.first();
  return row ? toDispute(row) : undefined;
}

export async function findDispute(db: Executor, id: string, organizationIds: readonly string[]): Promise<Dispute | undefined> {
  const row = await db(TABLE).where({ id }).whereIn('organization_id', organizationIds).first();
  return row ? toDispute(row) : undefined;
}

/** Moves a dispute on, guarded on the status it was read in; false when someone else moved it first. */
export async function updateDisputeStatus(
  trx: Executor,
  dispute: Dispute,
  changes: Pick<Dispute, 'status' | 'reason' | 'evidenceDueBy' | 'pastDue' | 'modifiedAt'>,
): Promise<boolean> {
  const count = await trx(TABLE).where({ id: dispute.id, status: dispute.status }).update({
    status: changes.status,
    reason: changes.reason,
    evidence_due_by: toDbTimeOrNull(changes.evidenceDueBy),
    past_due: changes.pastDue,
    modified_at: toDbTimeOrNull(changes.modifiedAt),
  });
  return count === 1;
}

export async function listDisputes(db: Executor, filter: DisputeFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<Dispute>> {
  const base = db(TABLE).whereIn('organization_id', filter.organizationIds);
  if (filter.orderIds) base.whereIn('order_id', filter.orderIds);
  if (filter.statuses) base.whereIn('status', filter.statuses);
  const [{ count }] = await base.clone().count({ count: '*' });
  const ordered = base.clone();
  for (const { column, order } of sorting) ordered.orderBy(column, order);
  const rows = await ordered.orderBy('id', 'asc').limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toDispute), totalCount: Number(count) };
}
