import { customersByIds } from '../customers/repository.js';
import { fromDbBool, fromDbInt, fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import { dialectOf, type Executor } from '../../db/database.js';
import { whereMetadata } from '../../db/sql.js';
import type { Metadata } from '../shared/metadata.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { Customer } from '../customers/schema.js';
import type { CancellationReason, PendingItem, Subscription, SubscriptionInterval, SubscriptionStatus } from './schema.js';
import { compiledRead } from '../../db/compiled-read.js';
import { read } from '../../db/read.js';
import { subscriptionScope, trackMetrics } from '../../metrics/rollups.js';

const TABLE = 'subscriptions';
const PRICES = 'subscription_prices';

/** A subscriptions row as a Subscription (`priceIds` from subscription_prices; empty where a caller needs no prices). */
export function toSubscription(row: Record<string, unknown>, priceIds: string[]): Subscription {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    customerId: String(row.customer_id),
    productId: String(row.product_id),
    discountId: (row.discount_id as string | null) ?? null,
    checkoutId: (row.checkout_id as string | null) ?? null,
    paymentMethodId: (row.payment_method_id as string | null) ?? null,
    status: row.status as SubscriptionStatus,
    amount: fromDbInt(row.amount),
    currency: String(row.currency),
    recurringInterval: row.recurring_interval as SubscriptionInterval,
    recurringIntervalCount: fromDbInt(row.recurring_interval_count),
    billingAnchor: fromDbTime(row.billing_anchor),
    cycle: fromDbInt(row.cycle),
    currentPeriodStart: fromDbTime(row.current_period_start),
    currentPeriodEnd: fromDbTime(row.current_period_end),
    trialStart: fromDbTimeOrNull(row.trial_start),
    trialEnd: fromDbTimeOrNull(row.trial_end),
    cancelAtPeriodEnd: fromDbBool(row.cancel_at_period_end),
    canceledAt: fromDbTimeOrNull(row.canceled_at),
    startedAt: fromDbTimeOrNull(row.started_at),
    endsAt: fromDbTimeOrNull(row.ends_at),
    endedAt: fromDbTimeOrNull(row.ended_at),
    pastDueAt: fromDbTimeOrNull(row.past_due_at),
    dunningAttempts: fromDbInt(row.dunning_attempts),
    dunningOrderId: (row.dunning_order_id as string | null) ?? null,
    discountStart: fromDbTimeOrNull(row.discount_start),
    customerCancellationReason: (row.customer_cancellation_reason as CancellationReason | null) ?? null,
    customerCancellationComment: (row.customer_cancellation_comment as string | null) ?? null,
    pendingItems: fromDbJson<PendingItem[]>(row.pending_items),
    metadata: fromDbJson<Metadata>(row.metadata),
    customFieldData: fromDbJson<Record<string, unknown>>(row.custom_field_data),
    priceIds,
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

/** The columns a change may write (created and updated alike). */
function columns(s: Subscription) {
  return {
    product_id: s.productId,
    discount_id: s.discountId,
    payment_method_id: s.paymentMethodId,
    status: s.status,
    amount: s.amount,
    currency: s.currency,
    recurring_interval: s.recurringInterval,
    recurring_interval_count: s.recurringIntervalCount,
    billing_anchor: toDbTime(s.billingAnchor),
    cycle: s.cycle,
    current_period_start: toDbTime(s.currentPeriodStart),
    current_period_end: toDbTime(s.currentPeriodEnd),
    trial_start: toDbTimeOrNull(s.trialStart),
    trial_end: toDbTimeOrNull(s.trialEnd),
    cancel_at_period_end: s.cancelAtPeriodEnd,
    canceled_at: toDbTimeOrNull(s.canceledAt),
    started_at: toDbTimeOrNull(s.startedAt),
    ends_at: toDbTimeOrNull(s.endsAt),
    ended_at: toDbTimeOrNull(s.endedAt),
    past_due_at: toDbTimeOrNull(s.pastDueAt),
    dunning_attempts: s.dunningAttempts,
    dunning_order_id: s.dunningOrderId,
    discount_start: toDbTimeOrNull(s.discountStart),
    customer_cancellation_reason: s.customerCancellationReason,
    customer_cancellation_comment: s.customerCancellationComment,
    pending_items: toDbJson(s.pendingItems),
    metadata: toDbJson(s.metadata),
    custom_field_data: toDbJson(s.customFieldData),
    modified_at: toDbTimeOrNull(s.modifiedAt),
  };
}

async function priceIdsOf(db: Executor, ids: readonly string[]): Promise<Map<string, string[]>> {
  const byId = new Map<string, string[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return byId;
  const rows = await pricesOfSubscriptions(db, ids);
  for (const row of rows) byId.get(row.subscription_id)?.push(row.price_id);
  return byId;
}

const pricesOfSubscriptions = compiledRead<Record<string, any>[], [readonly string[]]>((db, ids) =>
  db(PRICES).whereIn('subscription_id', ids).orderBy(['subscription_id', 'position']).select('subscription_id', 'price_id'),
);

async function writePrices(trx: Executor, subscriptionId: string, priceIds: readonly string[]): Promise<void> {
  await trx(PRICES).where({ subscription_id: subscriptionId }).delete();
  if (priceIds.length) await trx(PRICES).insert(priceIds.map((priceId, position) => ({ subscription_id: subscriptionId, price_id: priceId, position })));
}

/** Inserts a subscription and its prices, and adds it to the metrics rollups (same transaction). */
export async function insertSubscription(trx: Executor, s: Subscription): Promise<void> {
  await trackMetrics(trx, subscriptionScope(s), () => insertSubscriptionRows(trx, s));
}

async function insertSubscriptionRows(trx: Executor, s: Subscription): Promise<void> {
  await trx(TABLE).insert({
    ...columns(s),
    id: s.id,
    organization_id: s.organizationId,
    customer_id: s.customerId,
    checkout_id: s.checkoutId,
    created_at: toDbTime(s.createdAt),
  });
  await writePrices(trx, s.id, s.priceIds);
}

/**
 * Writes `next` only if the stored row is still in the state `current` was read in (same status and cycle):
 * the guarded update every status change and renewal goes through. False when another change got there first.
 */
export async function saveSubscription(trx: Executor, current: Subscription, next: Subscription): Promise<boolean> {
  const count = await trackMetrics(trx, subscriptionScope(next, current.customerId), () =>
    trx(TABLE).where({ id: current.id, status: current.status, cycle: current.cycle }).update(columns(next)),
  );
  if (count === 0) return false;
  if (next.priceIds.join() !== current.priceIds.join()) await writePrices(trx, next.id, next.priceIds);
  return true;
}

/** A subscription of one of the organizations; `forUpdate` locks its row on PostgreSQL for the transaction. */
export async function findSubscription(
  db: Executor,
  id: string,
  organizationIds: Iterable<string> | 'any',
  options: { forUpdate?: boolean } = {},
): Promise<Subscription | undefined> {
  const query = db(TABLE).where({ id });
  if (organizationIds !== 'any') query.whereIn('organization_id', [...organizationIds]);
  if (options.forUpdate && dialectOf(db) === 'postgres') query.forUpdate();
  const row = await query.first();
  return row ? toSubscription(row, (await priceIdsOf(db, [row.id])).get(row.id) ?? []) : undefined;
}

/** Subscriptions by id, of any organization (callers check ownership), in one query. */
export async function findSubscriptionsByIds(db: Executor, ids: readonly string[]): Promise<Subscription[]> {
  if (ids.length === 0) return [];
  const rows = await db(TABLE).whereIn('id', [...new Set(ids)]);
  const prices = await priceIdsOf(db, rows.map((row) => row.id));
  return rows.map((row) => toSubscription(row, prices.get(row.id) ?? []));
}

/** A customer's subscriptions in the given statuses, oldest first (customer state, "one subscription" rules). */
export async function subscriptionsOfCustomer(db: Executor, customerId: string, statuses: readonly SubscriptionStatus[]): Promise<Subscription[]> {
  const rows = await subscriptionsInStatuses(db, customerId, statuses);
  const prices = await priceIdsOf(db, rows.map((row) => row.id));
  return rows.map((row) => toSubscription(row, prices.get(row.id) ?? []));
}

/** Several customers' subscriptions in the given statuses, each customer's oldest first (customer states read together). */
export async function subscriptionsOfCustomers(db: Executor, customerIds: readonly string[], statuses: readonly SubscriptionStatus[]): Promise<Map<string, Subscription[]>> {
  const byCustomer = new Map<string, Subscription[]>(customerIds.map((id) => [id, []]));
  if (customerIds.length === 0) return byCustomer;
  const rows = await read<Record<string, any>[]>(db(TABLE).whereIn('customer_id', [...new Set(customerIds)]).whereIn('status', statuses).orderBy([{ column: 'created_at' }, { column: 'id' }]));
  const prices = await priceIdsOf(db, rows.map((row) => row.id));
  for (const row of rows) byCustomer.get(String(row.customer_id))?.push(toSubscription(row, prices.get(row.id) ?? []));
  return byCustomer;
}

const subscriptionsInStatuses = compiledRead<Record<string, any>[], [string, readonly string[]]>((db, customerId, statuses) =>
  db(TABLE).where({ customer_id: customerId }).whereIn('status', statuses).orderBy([{ column: 'created_at' }, { column: 'id' }]),
);

/** The customer's subscriptions in `statuses` are charged with this saved method from now on (the portal's new default card). */
export async function chargeSubscriptionsWith(trx: Executor, customerId: string, statuses: readonly SubscriptionStatus[], paymentMethodId: string): Promise<void> {
  await trx(TABLE).where({ customer_id: customerId }).whereIn('status', [...statuses]).update({ payment_method_id: paymentMethodId });
}

export interface SubscriptionFilter {
  organizationIds: readonly string[];
  productIds?: readonly string[];
  customerIds?: readonly string[];
  externalCustomerIds?: readonly string[];
  discountIds?: readonly string[];
  statuses?: readonly SubscriptionStatus[];
  /** true: trialing, active or past_due (still running); false: any other status. */
  active?: boolean;
  cancelAtPeriodEnd?: boolean;
  cancellationReasons?: readonly string[];
  canceledAtAfter?: Date;
  canceledAtBefore?: Date;
  /** Polar's export filters. */
  startedAfter?: Date;
  startedBefore?: Date;
  metadata: Record<string, string[]>;
}

/**
 * Polar's `active` filter: true is the statuses that give access (trialing, active); false is the ended ones
 * (canceled, unpaid). A subscription past due, or incomplete, is in neither.
 */
const ACTIVE: readonly SubscriptionStatus[] = ['trialing', 'active'];
const ENDED: readonly SubscriptionStatus[] = ['canceled', 'unpaid'];

function filtered(db: Executor, filter: SubscriptionFilter) {
  const query = db(TABLE).whereIn(`${TABLE}.organization_id`, [...filter.organizationIds]);
  if (filter.productIds) query.whereIn(`${TABLE}.product_id`, [...filter.productIds]);
  if (filter.customerIds) query.whereIn(`${TABLE}.customer_id`, [...filter.customerIds]);
  if (filter.externalCustomerIds) {
    query.whereIn(`${TABLE}.customer_id`, db('customers').select('id').whereIn('external_id', [...filter.externalCustomerIds]));
  }
  if (filter.discountIds) query.whereIn(`${TABLE}.discount_id`, [...filter.discountIds]);
  if (filter.statuses) query.whereIn(`${TABLE}.status`, [...filter.statuses]);
  if (filter.active !== undefined) query.whereIn(`${TABLE}.status`, [...(filter.active ? ACTIVE : ENDED)]);
  if (filter.cancelAtPeriodEnd !== undefined) query.where(`${TABLE}.cancel_at_period_end`, filter.cancelAtPeriodEnd);
  if (filter.cancellationReasons) query.whereIn(`${TABLE}.customer_cancellation_reason`, [...filter.cancellationReasons]);
  if (filter.canceledAtAfter) query.where(`${TABLE}.canceled_at`, '>', toDbTime(filter.canceledAtAfter));
  if (filter.canceledAtBefore) query.where(`${TABLE}.canceled_at`, '<', toDbTime(filter.canceledAtBefore));
  if (filter.startedAfter) query.where(`${TABLE}.started_at`, '>', toDbTime(filter.startedAfter));
  if (filter.startedBefore) query.where(`${TABLE}.started_at`, '<', toDbTime(filter.startedBefore));
  whereMetadata(query, `${TABLE}.metadata`, dialectOf(db) === 'postgres', filter.metadata);
  return query;
}

const SORT_COLUMNS: Record<string, string> = {
  status: `${TABLE}.status`,
  started_at: `${TABLE}.started_at`,
  current_period_end: `${TABLE}.current_period_end`,
  ended_at: `${TABLE}.ended_at`,
  ends_at: `${TABLE}.ends_at`,
  amount: `${TABLE}.amount`,
  created_at: `${TABLE}.created_at`,
  customer: 'c.email_lower',
  product: 'p.name',
  discount: 'd.name',
};

export async function listSubscriptions(db: Executor, filter: SubscriptionFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<Subscription>> {
  const [{ count }] = await filtered(db, filter).count<{ count: number | string }[]>({ count: '*' });
  const query = filtered(db, filter)
    .select(`${TABLE}.*`)
    .leftJoin('customers as c', 'c.id', `${TABLE}.customer_id`)
    .leftJoin('products as p', 'p.id', `${TABLE}.product_id`)
    .leftJoin('discounts as d', 'd.id', `${TABLE}.discount_id`);
  for (const { column, order } of sorting) if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
  const rows = await query.orderBy(`${TABLE}.id`).limit(page.limit).offset(offsetOf(page));
  const prices = await priceIdsOf(db, rows.map((row) => row.id));
  return { items: rows.map((row) => toSubscription(row, prices.get(row.id) ?? [])), totalCount: Number(count) };
}

/** The customers of subscriptions, deleted ones included (a subscription keeps showing who it was for). */
export function customersOfSubscriptions(db: Executor, ids: readonly string[]): Promise<Map<string, Customer>> {
  return customersByIds(db, ids);
}

/**
 * Whether a customer of the organization, named by id or else by email (any case, deleted customers aside), has a
 * subscription still billed: trialing, active or past due (Polar's `Subscription.billable`).
 */
export async function hasBillableSubscription(db: Executor, organizationId: string, who: { customerId: string | null; email: string | null }): Promise<boolean> {
  const query = db(TABLE).where(`${TABLE}.organization_id`, organizationId).whereIn(`${TABLE}.status`, ['trialing', 'active', 'past_due']);
  if (who.customerId) query.where(`${TABLE}.customer_id`, who.customerId);
  else if (who.email) query.join('customers', 'customers.id', `${TABLE}.customer_id`).whereRaw('lower(customers.email) = ?', [who.email.toLowerCase()]).whereNull('customers.deleted_at');
  else return false;
  return (await query.first(`${TABLE}.id`)) !== undefined;
}
