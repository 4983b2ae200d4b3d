import type { Knex } from 'knex';
import { fromDbInt, fromDbTimeOrNull } from '../db/columns.js';
import { dialectOf, type Executor } from '../db/database.js';
import type { MetricsFilter } from './schema.js';

/**
 * The queries behind /v1/metrics, and the only place they live. Each bucket is given as instants Till computed
 * on the timezone's calendar: `lo`/`hi` bound the rows it counts (the first and last are clipped to the asked
 * range) and `start` is where its interval starts (used to tell a subscription's first order from a renewal).
 * They are written inline as literals (never user text), so a year of days costs no bindings.
 */
export interface BucketBounds {
  start: number;
  lo: number;
  hi: number;
}

/** Order figures of one bucket (amounts in minor units of the asked currency). */
export interface OrderBucketRow {
  i: number;
  orders: number;
  revenue: number;
  netRevenue: number;
  oneTimeProducts: number;
  oneTimeRevenue: number;
  oneTimeNetRevenue: number;
  newSubscriptionsRevenue: number;
  newSubscriptionsNetRevenue: number;
  renewedSubscriptions: number;
  renewedSubscriptionsRevenue: number;
  renewedSubscriptionsNetRevenue: number;
}

export interface CheckoutBucketRow {
  i: number;
  checkouts: number;
  succeeded: number;
}

/** What the subscription metrics need of one subscription. */
export interface SubscriptionMetricRow {
  id: string;
  customerId: string;
  amount: number;
  recurringInterval: string;
  recurringIntervalCount: number;
  startedAt: Date | null;
  endsOrEndedAt: Date | null;
  trialEnd: Date | null;
  canceledAt: Date | null;
  cancellationReason: string | null;
}

/** Orders that received money (Polar's `Order.paid`): refunds leave an order counted, its refunds subtracted from net. */
const PAID_STATUSES = ['paid', 'partially_refunded', 'refunded'];
/** Subscriptions that never started billing are no part of any metric. */
const UNSTARTED_STATUSES = ['incomplete', 'incomplete_expired'];
/** Net of an order: what is left after the platform fee and the refunds (both before tax, like net_amount). */
const NET = '(o.net_amount - o.platform_fee_amount - o.refunded_amount)';

const inList = (values: readonly unknown[]) => values.map(() => '?').join(', ');

function timeLiteral(db: Executor, ms: number): string {
  const iso = new Date(ms).toISOString();
  return dialectOf(db) === 'postgres' ? `timestamptz '${iso}'` : `'${iso}'`;
}

function bucketValues(db: Executor, buckets: readonly BucketBounds[]): string {
  return buckets.map((b, i) => `(${i}, ${timeLiteral(db, b.start)}, ${timeLiteral(db, b.lo)}, ${timeLiteral(db, b.hi)})`).join(', ');
}

/** The filter's conditions on a table aliased `alias` with a product column, customer column and currency. */
function filterSql(filter: MetricsFilter, currency: string, alias: string, productColumn = 'product_id') {
  const parts = [`${alias}.organization_id in (${inList(filter.organizationIds)})`, `${alias}.currency = ?`];
  const bindings: Knex.RawBinding[] = [...filter.organizationIds, currency];
  if (filter.productIds?.length) {
    parts.push(`${alias}.${productColumn} in (${inList(filter.productIds)})`);
    bindings.push(...filter.productIds);
  }
  if (filter.customerIds?.length) {
    parts.push(`${alias}.customer_id in (${inList(filter.customerIds)})`);
    bindings.push(...filter.customerIds);
  }
  const types = new Set(filter.billingTypes ?? []);
  if (types.size === 1) {
    // A product is recurring when it has a recurring interval (Polar's Product.billing_type).
    const recurring = types.has('recurring');
    parts.push(`exists (select 1 from products p where p.id = ${alias}.${productColumn} and p.recurring_interval is ${recurring ? 'not ' : ''}null)`);
  }
  return { sql: parts.join(' and '), bindings };
}

const num = (value: unknown) => (value === null || value === undefined ? 0 : fromDbInt(typeof value === 'number' ? Math.round(value) : value));

/** Per bucket: paid orders, their revenue and net revenue, split by one-time, first subscription order and renewal. */
export async function orderBuckets(db: Executor, filter: MetricsFilter, currency: string, buckets: readonly BucketBounds[]): Promise<OrderBucketRow[]> {
  if (!buckets.length || !filter.organizationIds.length) return [];
  const where = filterSql(filter, currency, 'o');
  const isNew = 's.started_at >= b.bstart and s.started_at < b.hi';
  const isRenewal = `o.subscription_id is not null and not (${isNew})`;
  const sql = `with b(i, bstart, lo, hi) as (values ${bucketValues(db, buckets)})
    select b.i as i, count(o.id) as orders, sum(o.net_amount) as revenue, sum(${NET}) as net_revenue,
      sum(case when o.subscription_id is null then 1 else 0 end) as one_time_products,
      sum(case when o.subscription_id is null then o.net_amount else 0 end) as one_time_revenue,
      sum(case when o.subscription_id is null then ${NET} else 0 end) as one_time_net_revenue,
      sum(case when ${isNew} then o.net_amount else 0 end) as new_revenue,
      sum(case when ${isNew} then ${NET} else 0 end) as new_net_revenue,
      count(distinct case when ${isRenewal} then o.subscription_id end) as renewed,
      sum(case when ${isRenewal} then o.net_amount else 0 end) as renewed_revenue,
      sum(case when ${isRenewal} then ${NET} else 0 end) as renewed_net_revenue
    from b
    join orders o on o.created_at >= b.lo and o.created_at < b.hi
    left join subscriptions s on s.id = o.subscription_id
    where o.status in (${inList(PAID_STATUSES)}) and ${where.sql}
    group by b.i`;
  const rows = await db.raw(sql, [...PAID_STATUSES, ...where.bindings]);
  return rowsOf(rows).map((row) => ({
    i: num(row.i),
    orders: num(row.orders),
    revenue: num(row.revenue),
    netRevenue: num(row.net_revenue),
    oneTimeProducts: num(row.one_time_products),
    oneTimeRevenue: num(row.one_time_revenue),
    oneTimeNetRevenue: num(row.one_time_net_revenue),
    newSubscriptionsRevenue: num(row.new_revenue),
    newSubscriptionsNetRevenue: num(row.new_net_revenue),
    renewedSubscriptions: num(row.renewed),
    renewedSubscriptionsRevenue: num(row.renewed_revenue),
    renewedSubscriptionsNetRevenue: num(row.renewed_net_revenue),
  }));
}

/** Revenue and net revenue of the paid orders made before `before`: where the cumulative figures start. */
export async function revenueBefore(db: Executor, filter: MetricsFilter, currency: string, before: number): Promise<{ revenue: number; netRevenue: number }> {
  if (!filter.organizationIds.length) return { revenue: 0, netRevenue: 0 };
  const where = filterSql(filter, currency, 'o');
  const rows = await db.raw(
    `select sum(o.net_amount) as revenue, sum(${NET}) as net_revenue from orders o
     where o.status in (${inList(PAID_STATUSES)}) and o.created_at < ${timeLiteral(db, before)} and ${where.sql}`,
    [...PAID_STATUSES, ...where.bindings],
  );
  const [row] = rowsOf(rows);
  return { revenue: num(row?.revenue), netRevenue: num(row?.net_revenue) };
}

/** Per bucket: checkouts created, and how many of those succeeded. */
export async function checkoutBuckets(db: Executor, filter: MetricsFilter, currency: string, buckets: readonly BucketBounds[]): Promise<CheckoutBucketRow[]> {
  if (!buckets.length || !filter.organizationIds.length) return [];
  const where = filterSql(filter, currency, 'c');
  const sql = `with b(i, bstart, lo, hi) as (values ${bucketValues(db, buckets)})
    select b.i as i, count(c.id) as checkouts, sum(case when c.status = 'succeeded' then 1 else 0 end) as succeeded
    from b join checkouts c on c.created_at >= b.lo and c.created_at < b.hi
    where ${where.sql}
    group by b.i`;
  const rows = await db.raw(sql, where.bindings);
  return rowsOf(rows).map((row) => ({ i: num(row.i), checkouts: num(row.checkouts), succeeded: num(row.succeeded) }));
}

/**
 * The subscriptions that can count in [from, to]: started by `to` (or never stamped) and not ended or ending
 * before `from`. A subscription canceled after `from` has not ended before it, so the cancellations are here too.
 */
export async function subscriptionsBetween(db: Executor, filter: MetricsFilter, currency: string, from: number, to: number): Promise<SubscriptionMetricRow[]> {
  if (!filter.organizationIds.length) return [];
  const where = filterSql(filter, currency, 's');
  const rows = await db.raw(
    `select s.id, s.customer_id, s.amount, s.recurring_interval, s.recurring_interval_count, s.started_at,
       coalesce(s.ended_at, s.ends_at) as ends_or_ended_at, s.trial_end, s.canceled_at, s.customer_cancellation_reason
     from subscriptions s
     where s.status not in (${inList(UNSTARTED_STATUSES)}) and ${where.sql}
       and (s.started_at is null or s.started_at <= ${timeLiteral(db, to)})
       and (coalesce(s.ended_at, s.ends_at) is null or coalesce(s.ended_at, s.ends_at) >= ${timeLiteral(db, from)})`,
    [...UNSTARTED_STATUSES, ...where.bindings],
  );
  return rowsOf(rows).map((row) => ({
    id: String(row.id),
    customerId: String(row.customer_id),
    amount: num(row.amount),
    recurringInterval: String(row.recurring_interval),
    recurringIntervalCount: num(row.recurring_interval_count),
    startedAt: fromDbTimeOrNull(row.started_at),
    endsOrEndedAt: fromDbTimeOrNull(row.ends_or_ended_at),
    trialEnd: fromDbTimeOrNull(row.trial_end),
    canceledAt: fromDbTimeOrNull(row.canceled_at),
    cancellationReason: row.customer_cancellation_reason === null ? null : String(row.customer_cancellation_reason),
  }));
}

/** The default presentment currency of each organization. */
export async function defaultCurrencies(db: Executor, organizationIds: readonly string[]): Promise<string[]> {
  if (!organizationIds.length) return [];
  const rows = await db('organization_settings').whereIn('organization_id', [...organizationIds]).select('default_presentment_currency');
  return rows.map((row: { default_presentment_currency: string | null }) => row.default_presentment_currency ?? 'usd');
}

/** knex.raw answers rows on SQLite and a result with `.rows` on PostgreSQL. */
function rowsOf(result: unknown): Record<string, unknown>[] {
  return (Array.isArray(result) ? result : (result as { rows: Record<string, unknown>[] }).rows) as Record<string, unknown>[];
}
