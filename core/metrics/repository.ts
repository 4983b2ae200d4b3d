import type { Knex } from 'knex';
import { fromDbInt, fromDbTime } from '../db/columns.js';
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

/** What the subscription metrics need of one subscription; instants in epoch milliseconds. */
export interface SubscriptionMetricRow {
  customerId: string;
  amount: number;
  recurringInterval: string;
  recurringIntervalCount: number;
  startedAt: number | null;
  endsOrEndedAt: number | null;
  trialEnd: number | null;
  canceledAt: number | null;
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
function filterSql(filter: MetricsFilter, currency: string, alias: string, productColumn = 'product_id', byOrganization = true) {
  const parts = byOrganization ? [`${alias}.organization_id in (${inList(filter.organizationIds)})`] : [];
  const bindings: Knex.RawBinding[] = byOrganization ? [...filter.organizationIds] : [];
  parts.push(`${alias}.currency = ?`);
  bindings.push(currency);
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

/**
 * Per bucket: paid orders, their revenue and net revenue, split by one-time, first subscription order and renewal.
 * An order of a subscription is "new" when the subscription started in the order's bucket, else a renewal (Polar's
 * definition); a subscription never started (no started_at) makes neither. Read in three passes rather than by
 * joining every order to its subscription, which cost most of the time: the orders of each bucket alone (from the
 * organization/date index, which carries every column read here), the orders of the subscriptions started in
 * the bucket (few: found from subscriptions by start date), and the orders of subscriptions never started (none
 * in practice); the renewals are what remains. A subscription's orders of one bucket are all new or all renewals,
 * so the distinct counts subtract too.
 */
export async function orderBuckets(db: Executor, filter: MetricsFilter, currency: string, buckets: readonly BucketBounds[]): Promise<OrderBucketRow[]> {
  if (!buckets.length || !filter.organizationIds.length) return [];
  const all = await ordersPerBucket(db, filter, currency, buckets);
  const started = await subscriptionOrdersPerBucket(db, filter, currency, buckets, 'started');
  const unstarted = await subscriptionOrdersPerBucket(db, filter, currency, buckets, 'unstarted');
  return all.map((row) => {
    const fresh = started.get(row.i) ?? NO_ORDERS;
    const neither = unstarted.get(row.i) ?? NO_ORDERS;
    return {
      i: row.i,
      orders: row.orders,
      revenue: row.revenue,
      netRevenue: row.netRevenue,
      oneTimeProducts: row.oneTimeProducts,
      oneTimeRevenue: row.oneTimeRevenue,
      oneTimeNetRevenue: row.oneTimeNetRevenue,
      newSubscriptionsRevenue: fresh.revenue,
      newSubscriptionsNetRevenue: fresh.netRevenue,
      renewedSubscriptions: row.subscriptions - fresh.subscriptions - neither.subscriptions,
      renewedSubscriptionsRevenue: row.subscriptionRevenue - fresh.revenue - neither.revenue,
      renewedSubscriptionsNetRevenue: row.subscriptionNetRevenue - fresh.netRevenue - neither.netRevenue,
    };
  });
}

interface SubscriptionOrders {
  revenue: number;
  netRevenue: number;
  /** Distinct subscriptions with orders in the bucket. */
  subscriptions: number;
}

const NO_ORDERS: SubscriptionOrders = { revenue: 0, netRevenue: 0, subscriptions: 0 };

/** Every paid order of each bucket: counts and sums, one-time and subscription orders apart. */
async function ordersPerBucket(db: Executor, filter: MetricsFilter, currency: string, buckets: readonly BucketBounds[]) {
  const where = filterSql(filter, currency, 'o');
  const sums = `count(*) as orders, sum(o.net_amount) as revenue, sum(${NET}) as net_revenue,
      sum(case when o.subscription_id is null then 1 else 0 end) as one_time_products,
      sum(case when o.subscription_id is null then o.net_amount else 0 end) as one_time_revenue,
      sum(case when o.subscription_id is null then ${NET} else 0 end) as one_time_net_revenue,
      sum(case when o.subscription_id is not null then o.net_amount else 0 end) as subscription_revenue,
      sum(case when o.subscription_id is not null then ${NET} else 0 end) as subscription_net_revenue,
      count(distinct o.subscription_id) as subscriptions`;
  const inBucket = `o.created_at >= b.lo and o.created_at < b.hi and o.status in (${inList(PAID_STATUSES)}) and ${where.sql}`;
  // PostgreSQL aggregates each bucket's orders as it reads them (a lateral subquery per bucket); joined and grouped,
  // it sorted all of them first. SQLite reads the join bucket by bucket and groups cheaply.
  const sql =
    dialectOf(db) === 'postgres'
      ? `with b(i, bstart, lo, hi) as (values ${bucketValues(db, buckets)})
         select b.i as i, x.* from b cross join lateral (select ${sums} from orders o where ${inBucket}) x`
      : `with b(i, bstart, lo, hi) as (values ${bucketValues(db, buckets)})
         select b.i as i, ${sums} from b join orders o on ${inBucket} group by b.i`;
  const rows = await db.raw(sql, [...PAID_STATUSES, ...where.bindings]);
  return rowsOf(rows).map((row) => ({
    i: num(row.i),
    orders: num(row.orders),
    revenue: num(row.revenue),
    netRevenue: num(row.net_revenue),
    oneTimeProducts: num(row.one_time_products),
    oneTimeRevenue: num(row.one_time_revenue),
    oneTimeNetRevenue: num(row.one_time_net_revenue),
    subscriptionRevenue: num(row.subscription_revenue),
    subscriptionNetRevenue: num(row.subscription_net_revenue),
    subscriptions: num(row.subscriptions),
  }));
}

/**
 * Per bucket, the paid orders of the subscriptions that started in that bucket (`started`), or of those that never
 * started (`unstarted`). Orders and subscriptions belong to the same organization. Written as cross joins so SQLite
 * keeps that order (buckets, then the subscriptions started in each, then their orders) without statistics.
 */
async function subscriptionOrdersPerBucket(
  db: Executor,
  filter: MetricsFilter,
  currency: string,
  buckets: readonly BucketBounds[],
  which: 'started' | 'unstarted',
): Promise<Map<number, SubscriptionOrders>> {
  // The organization is the subscription's (an order's subscription is of the order's organization): a condition on the
  // order's would lead SQLite, which has no statistics, to read each bucket's orders rather than the subscription's.
  const where = filterSql(filter, currency, 'o', 'product_id', false);
  const organizations = `s.organization_id in (${inList(filter.organizationIds)})`;
  const startedIn = which === 'started' ? 's.started_at >= b.bstart and s.started_at < b.hi' : 's.started_at is null';
  const ofSubscription = `o.subscription_id = s.id and o.created_at >= b.lo and o.created_at < b.hi and o.status in (${inList(PAID_STATUSES)}) and ${where.sql}`;
  // PostgreSQL cannot see how few subscriptions start in a bucket (the bounds are in a VALUES list) and would hash all
  // the orders: a lateral subquery (kept apart by offset 0) has it look up each subscription's orders of the bucket in the index.
  const orders =
    dialectOf(db) === 'postgres'
      ? `cross join lateral (select o.net_amount, o.platform_fee_amount, o.refunded_amount from orders o where ${ofSubscription} offset 0) o where`
      : `cross join orders o where ${ofSubscription} and`;
  const rows = await db.raw(
    `with b(i, bstart, lo, hi) as (values ${bucketValues(db, buckets)})
     select b.i as i, sum(o.net_amount) as revenue, sum(${NET}) as net_revenue, count(distinct s.id) as subscriptions
     from b cross join subscriptions s ${orders} ${organizations} and ${startedIn}
     group by b.i`,
    [...PAID_STATUSES, ...where.bindings, ...filter.organizationIds],
  );
  return new Map(
    rowsOf(rows).map((row) => [num(row.i), { revenue: num(row.revenue), netRevenue: num(row.net_revenue), subscriptions: num(row.subscriptions) }]),
  );
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
  // Instants as epoch milliseconds: node-postgres would parse each into a Date (most of this read's time on PostgreSQL).
  const epoch = dialectOf(db) === 'postgres' ? (sql: string) => `cast(extract(epoch from ${sql}) * 1000 as double precision)` : (sql: string) => sql;
  const ends = 'coalesce(s.ended_at, s.ends_at)';
  const rows = await db.raw(
    `select s.customer_id, s.amount, s.recurring_interval, s.recurring_interval_count, ${epoch('s.started_at')} as started_at,
       ${epoch(ends)} as ends_or_ended_at, ${epoch('s.trial_end')} as trial_end, ${epoch('s.canceled_at')} as canceled_at,
       s.customer_cancellation_reason
     from subscriptions s
     where s.status not in (${inList(UNSTARTED_STATUSES)}) and ${where.sql}
       and (s.started_at is null or s.started_at <= ${timeLiteral(db, to)})
       and (${ends} is null or ${ends} >= ${timeLiteral(db, from)})`,
    [...UNSTARTED_STATUSES, ...where.bindings],
  );
  return rowsOf(rows).map((row) => ({
    customerId: String(row.customer_id),
    amount: num(row.amount),
    recurringInterval: String(row.recurring_interval),
    recurringIntervalCount: num(row.recurring_interval_count),
    startedAt: epochOrNull(row.started_at),
    endsOrEndedAt: epochOrNull(row.ends_or_ended_at),
    trialEnd: epochOrNull(row.trial_end),
    canceledAt: epochOrNull(row.canceled_at),
    cancellationReason: row.customer_cancellation_reason === null ? null : String(row.customer_cancellation_reason),
  }));
}

/** An instant read as epoch milliseconds (PostgreSQL) or ISO text (SQLite). */
const epochOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : typeof value === 'number' ? value : fromDbTime(value).getTime();

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
