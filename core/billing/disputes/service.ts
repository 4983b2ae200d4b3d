import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { findPaymentByProcessorId } from '../../payments/repository.js';
import { revokeBenefits } from '../benefit-grants/service.js';
import { customersByIds } from '../customers/repository.js';
import type { Customer } from '../customers/schema.js';
import { findOrder } from '../orders/repository.js';
import type { PageQuery, Page } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { endSubscription } from '../subscriptions/renewal.js';
import { findSubscription } from '../subscriptions/repository.js';
import { isTerminal } from '../subscriptions/transitions.js';
import { findDispute, findDisputeByProcessorId, insertDispute, listDisputes as listRows, updateDisputeStatus } from './repository.js';
import { DISPUTE_TRANSITIONS, isClosedDispute, isResolvedDispute, type Dispute, type DisputeFilter, type DisputeStatus } from './schema.js';

export interface DisputeDeps {
  db: Database;
  clock: Clock;
  baseUrl: string;
}

/** What a processor says about one of its disputes (Stripe: a `charge.dispute.*` event's dispute, read afresh). */
export interface ProcessorDispute {
  processor: string;
  processorDisputeId: string;
  /** The intent it disputes (Stripe `pi_…`), by which Till finds its payment and order. */
  processorIntentId: string;
  status: DisputeStatus;
  reason: string | null;
  /** The disputed total, tax included, in minor units. */
  amount: number;
  currency: string;
  evidenceDueBy: Date | null;
  pastDue: boolean;
}

export type DisputeView = Dispute & { customer: Customer };

/**
 * Splits a disputed total into net and tax in the order's proportion, as a refund of the same total would be.
 * Rounding goes to the net amount.
 */
const taxOf = (total: number, order: { taxAmount: number; totalAmount: number }) => (order.totalAmount === 0 ? 0 : Math.round((total * order.taxAmount) / order.totalAmount));

/**
 * A resolved dispute ends what the disputed order gave, as Polar does: its subscription is revoked now (benefits
 * with it), or for a one-time purchase the order's benefits are revoked.
 */
async function revokeDisputed(trx: Knex.Transaction, clock: Clock, baseUrl: string, dispute: Dispute): Promise<void> {
  const order = await findOrder(trx, dispute.orderId, null);
  if (!order) return;
  if (order.subscriptionId) {
    const subscription = await findSubscription(trx, order.subscriptionId, 'any', { forUpdate: true });
    if (subscription && !isTerminal(subscription.status)) await endSubscription(trx, clock, baseUrl, subscription, clock.now());
    return;
  }
  await revokeBenefits(trx, clock, { organizationId: order.organizationId, customerId: order.customerId, orderId: order.id });
}

/**
 * Records what the processor says of a dispute, however often and in whatever order it says it: created the first
 * time (tied to Till's payment and order), then moved along DISPUTE_TRANSITIONS with a guarded update; a closed
 * dispute never reopens. Resolving it (won or lost) revokes what the order gave, once. Answers undefined for a
 * dispute of a payment that is not Till's.
 */
export async function recordProcessorDispute(deps: DisputeDeps, input: ProcessorDispute): Promise<Dispute | undefined> {
  const payment = await findPaymentByProcessorId(deps.db, input.processor, input.processorIntentId);
  if (!payment?.orderId || !payment.customerId) return undefined;
  const clock = await organizationClock(deps.db, deps.clock, payment.organizationId);
  return deps.db.transaction(async (trx) => {
    const order = await findOrder(trx, payment.orderId!, null, { forUpdate: true });
    if (!order) return undefined;
    const now = clock.now();
    const existing = await findDisputeByProcessorId(trx, input.processor, input.processorDisputeId, { forUpdate: true });
    const dispute =
      existing ??
      (await insertDispute(trx, {
        organizationId: payment.organizationId,
        orderId: order.id,
        paymentId: payment.id,
        customerId: payment.customerId!,
        processor: input.processor,
        processorDisputeId: input.processorDisputeId,
        // Created as the processor first knew it; the status below moves it on.
        status: input.status === 'early_warning' ? 'early_warning' : 'needs_response',
        reason: input.reason,
        amount: input.amount - taxOf(input.amount, order),
        taxAmount: taxOf(input.amount, order),
        currency: input.currency,
        evidenceDueBy: input.evidenceDueBy,
        pastDue: input.pastDue,
        createdAt: now,
        modifiedAt: null,
      }));
    if (dispute.status === input.status || !DISPUTE_TRANSITIONS[dispute.status].includes(input.status)) return dispute;
    const changes = { status: input.status, reason: input.reason ?? dispute.reason, evidenceDueBy: input.evidenceDueBy, pastDue: input.pastDue, modifiedAt: now };
    if (!(await updateDisputeStatus(trx, dispute, changes))) return (await findDisputeByProcessorId(trx, input.processor, input.processorDisputeId))!;
    const moved = { ...dispute, ...changes };
    if (isResolvedDispute(moved.status)) await revokeDisputed(trx, clock, deps.baseUrl, moved);
    return moved;
  });
}

async function withCustomer(db: Database, disputes: Dispute[]): Promise<DisputeView[]> {
  const customers = await customersByIds(db, [...new Set(disputes.map((dispute) => dispute.customerId))]);
  return disputes.map((dispute) => {
    const customer = customers.get(dispute.customerId);
    if (!customer) throw new Error(`dispute ${dispute.id} names customer ${dispute.customerId}, which is gone`);
    return { ...dispute, customer };
  });
}

export async function getDispute(db: Database, readable: ReadonlySet<string>, id: string): Promise<DisputeView> {
  const dispute = await findDispute(db, id, [...readable]);
  if (!dispute) throw new CoreError('not_found', 'DISPUTE_NOT_FOUND', 'Dispute not found');
  return (await withCustomer(db, [dispute]))[0];
}

export async function listDisputes(db: Database, filter: DisputeFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<DisputeView>> {
  const rows = await listRows(db, filter, sorting, page);
  return { items: await withCustomer(db, rows.items), totalCount: rows.totalCount };
}

/**
 * Accepts a dispute, conceding the chargeback: the processor closes it (as lost), and its answer is recorded as
 * any other news of the dispute. A closed dispute cannot be accepted (409 DISPUTE_NOT_OPEN).
 */
export async function acceptDispute(
  deps: DisputeDeps & { closeAtProcessor: (dispute: Dispute) => Promise<ProcessorDispute> },
  writable: ReadonlySet<string>,
  id: string,
): Promise<DisputeView> {
  const dispute = await getDispute(deps.db, writable, id);
  if (isClosedDispute(dispute.status)) throw new CoreError('conflict', 'DISPUTE_NOT_OPEN', `The dispute is already closed (${dispute.status})`);
  await recordProcessorDispute(deps, await deps.closeAtProcessor(dispute));
  return getDispute(deps.db, writable, id);
}
