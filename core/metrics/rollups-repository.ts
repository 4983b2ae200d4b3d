import { fromDbInt, fromDbTime } from '../db/columns.js';
import { dialectOf, type Executor } from '../db/database.js';
import {
  CHECKOUT_TABLE,
  KEYS,
  ORDER_TABLE,
  ORDER_VALUES,
  SUBSCRIPTION_TABLE,
  SUBSCRIPTION_VALUES,
  type CheckoutFacts,
  type OrderFacts,
  type Rollups,
  type SubscriptionFacts,
} from './rollup-rows.js';

/** The queries of the metrics rollups (migration 0050): reading the facts they are made of, adding to them, reading them. */

const num = (value: unknown) => (value === null || value === undefined ? 0 : fromDbInt(typeof value === 'number' ? Math.round(value) : value));
const time = (value: unknown) => (value === null || value === undefined ? null : fromDbTime(value).getTime());
const inList = (values: readonly unknown[]) => values.map(() => '?').join(', ');

/**
 * PostgreSQL: one writer at a time per scope (a customer's orders and subscriptions, or a checkout), so what a change
 * reads before and after itself is its own doing; SQLite's single writer gives that by itself.
 */
export async function lockMetricsScope(trx: Executor, scope: string): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`metrics:${scope}`]);
}

const toOrder = (row: Record<string, unknown>): OrderFacts => ({
  id: String(row.id),
  organizationId: String(row.organization_id),
  currency: String(row.currency),
  productId: row.product_id === null || row.product_id === undefined ? null : String(row.product_id),
  subscriptionId: row.subscription_id === null || row.subscription_id === undefined ? null : String(row.subscription_id),
  status: String(row.status),
  createdAt: time(row.created_at)!,
  netAmount: num(row.net_amount),
  platformFeeAmount: num(row.platform_fee_amount),
  refundedAmount: num(row.refunded_amount),
});
const ORDER_COLUMNS = ['id', 'organization_id', 'currency', 'product_id', 'subscription_id', 'status', 'created_at', 'net_amount', 'platform_fee_amount', 'refunded_amount'];

/** The one-time orders among `orderIds`, every order of `subscriptionIds`, and when each of those subscriptions started. */
export async function orderFacts(db: Executor, orderIds: readonly string[], subscriptionIds: readonly string[]) {
  const orders: OrderFacts[] = [];
  if (orderIds.length) orders.push(...(await db('orders').whereIn('id', [...orderIds]).whereNull('subscription_id').select(ORDER_COLUMNS)).map(toOrder));
  const starts = new Map<string, number | null>();
  if (subscriptionIds.length) {
    orders.push(...(await db('orders').whereIn('subscription_id', [...subscriptionIds]).select(ORDER_COLUMNS)).map(toOrder));
    for (const row of await db('subscriptions').whereIn('id', [...subscriptionIds]).select('id', 'started_at')) starts.set(String(row.id), time(row.started_at));
  }
  return { orders, starts };
}

/** The customer and subscription of an order, to know what its change moves. */
export async function orderOwner(db: Executor, orderId: string): Promise<{ customerId: string; subscriptionId: string | null } | undefined> {
  const row = await db('orders').where({ id: orderId }).first('customer_id', 'subscription_id');
  return row ? { customerId: String(row.customer_id), subscriptionId: row.subscription_id === null ? null : String(row.subscription_id) } : undefined;
}

const SUBSCRIPTION_COLUMNS = `s.organization_id, s.customer_id, s.currency, s.product_id, s.status, s.amount, s.recurring_interval, s.recurring_interval_count,
  s.started_at, coalesce(s.ended_at, s.ends_at) as ends_or_ended_at, s.trial_end, s.canceled_at, s.customer_cancellation_reason`;
const toSubscription = (row: Record<string, unknown>): SubscriptionFacts => ({
  organizationId: String(row.organization_id),
  customerId: String(row.customer_id),
  currency: String(row.currency),
  productId: String(row.product_id),
  status: String(row.status),
  amount: num(row.amount),
  recurringInterval: String(row.recurring_interval),
  recurringIntervalCount: num(row.recurring_interval_count),
  startedAt: time(row.started_at),
  endsOrEndedAt: time(row.ends_or_ended_at),
  trialEnd: time(row.trial_end),
  canceledAt: time(row.canceled_at),
  cancellationReason: row.customer_cancellation_reason === null ? null : String(row.customer_cancellation_reason),
});

/** Every subscription of the customers. */
export async function subscriptionFacts(db: Executor, customerIds: readonly string[]): Promise<SubscriptionFacts[]> {
  if (!customerIds.length) return [];
  return rowsOf(await db.raw(`select ${SUBSCRIPTION_COLUMNS} from subscriptions s where s.customer_id in (${inList(customerIds)})`, [...customerIds])).map(toSubscription);
}

const toCheckout = (row: Record<string, unknown>): CheckoutFacts => ({
  organizationId: String(row.organization_id),
  currency: String(row.currency),
  productId: String(row.product_id),
  status: String(row.status),
  createdAt: time(row.created_at)!,
});
const CHECKOUT_COLUMNS = ['organization_id', 'currency', 'product_id', 'status', 'created_at'];

export async function checkoutFacts(db: Executor, checkoutIds: readonly string[]): Promise<CheckoutFacts[]> {
  if (!checkoutIds.length) return [];
  return (await db('checkouts').whereIn('id', [...checkoutIds]).select(CHECKOUT_COLUMNS)).map(toCheckout);
}

/** Everything of one organization (the backfill). */
export async function organizationFacts(db: Executor, organizationId: string) {
  const orders = (await db('orders').where({ organization_id: organizationId }).select(ORDER_COLUMNS)).map(toOrder);
  const subscriptionRows = rowsOf(await db.raw(`select s.id, ${SUBSCRIPTION_COLUMNS} from subscriptions s where s.organization_id = ?`, [organizationId]));
  const starts = new Map<string, number | null>(subscriptionRows.map((row) => [String(row.id), time(row.started_at)]));
  // An order's subscription may be of another organization only by a bug; its start is then read on its own.
  const missing = [...new Set(orders.flatMap((o) => (o.subscriptionId !== null && !starts.has(o.subscriptionId) ? [o.subscriptionId] : [])))];
  for (let i = 0; i < missing.length; i += 500) {
    for (const row of await db('subscriptions').whereIn('id', missing.slice(i, i + 500)).select('id', 'started_at')) starts.set(String(row.id), time(row.started_at));
  }
  const checkouts = (await db('checkouts').where({ organization_id: organizationId }).select(CHECKOUT_COLUMNS)).map(toCheckout);
  return { orders, starts, subscriptions: subscriptionRows.map(toSubscription), checkouts };
}

export async function organizationIdsOf(db: Executor): Promise<string[]> {
  return (await db('organization').select('id')).map((row: { id: string }) => row.id);
}

/** Adds rows to the rollups (an existing row by its key gets the values added), in key order so writers cannot deadlock. */
export async function addToRollups(trx: Executor, rollups: Rollups): Promise<void> {
  for (const [table, rows] of rollups) {
    if (!rows.size) continue;
    const values = [...rows.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, row]) => ({ ...row.key, ...row.values }));
    const columns = Object.keys(values[0]!).filter((column) => !KEYS[table].includes(column));
    const merge = Object.fromEntries(columns.map((column) => [column, trx.raw(`${table}.${column} + excluded.${column}`)]));
    // Bounded statements: SQLite allows 500 rows in the compound SELECT knex writes for an upsert (and 32,766 bindings).
    const per = 400;
    for (let start = 0; start < values.length; start += per) {
      await trx(table).insert(values.slice(start, start + per)).onConflict([...KEYS[table]]).merge(merge);
    }
  }
}

export async function clearRollups(trx: Executor, organizationId?: string): Promise<void> {
  for (const table of [ORDER_TABLE, SUBSCRIPTION_TABLE, CHECKOUT_TABLE]) {
    const query = trx(table);
    if (organizationId) query.where({ organization_id: organizationId });
    await query.delete();
  }
}

/** A range of hours [lo, hi) in epoch milliseconds, numbered. */
export interface HourRange {
  lo: number;
  hi: number;
}

const rangeValues = (ranges: readonly HourRange[]) => ranges.map((r, i) => `(${i}, ${Math.trunc(r.lo)}, ${Math.trunc(r.hi)})`).join(', ');

/**
 * Per range: the sums of the order rollups, and of their conditional rows (see addOrders) the subscription orders
 * first of their subscription in the range (the previous one is before it), and the new-subscription ones (their
 * subscription started within the range). Only for ranges of whole hours no longer than NEAR_MS.
 */
export async function orderRollups(db: Executor, organizationIds: readonly string[], currency: string, ranges: readonly HourRange[]) {
  if (!ranges.length || !organizationIds.length) return [];
  const on = `r.organization_id in (${inList(organizationIds)}) and r.currency = ? and r.hour_ms >= b.lo and r.hour_ms < b.hi`;
  const sums = rowsOf(
    await db.raw(
      `with b(i, lo, hi) as (values ${rangeValues(ranges)})
       select b.i as i, ${ORDER_VALUES.map((column) => `sum(r.${column}) as ${column}`).join(', ')}
       from b join ${ORDER_TABLE} r on ${on} group by b.i`,
      [...organizationIds, currency],
    ),
  );
  const fresh = `r.kind = 'subscription' and r.start_hour_ms >= b.lo and r.start_hour_ms < b.hi`;
  const once = 'r.prev_hour_ms < b.lo';
  const conditional = rowsOf(
    await db.raw(
      `with b(i, lo, hi) as (values ${rangeValues(ranges)})
       select b.i as i, sum(case when ${once} then r.orders else 0 end) as once_orders,
         sum(case when r.kind = 'unstarted' and ${once} then r.orders else 0 end) as unstarted_once_orders,
         sum(case when ${fresh} then r.revenue else 0 end) as fresh_revenue,
         sum(case when ${fresh} then r.net_revenue else 0 end) as fresh_net_revenue,
         sum(case when ${fresh} and ${once} then r.orders else 0 end) as fresh_once_orders
       from b join ${ORDER_TABLE} r on ${on} and r.kind in ('subscription', 'unstarted') group by b.i`,
      [...organizationIds, currency],
    ),
  );
  const byRange = new Map<number, Record<string, number>>();
  for (const row of [...sums, ...conditional]) {
    const i = num(row.i);
    const total = byRange.get(i) ?? { i };
    for (const [column, value] of Object.entries(row)) if (column !== 'i') total[column] = (total[column] ?? 0) + num(value);
    byRange.set(i, total);
  }
  return [...byRange.values()];
}

/** Revenue and net revenue of the paid orders before `before` (a whole hour). */
export async function revenueBeforeRollups(db: Executor, organizationIds: readonly string[], currency: string, before: number) {
  if (!organizationIds.length) return { revenue: 0, netRevenue: 0 };
  const [row] = rowsOf(
    await db.raw(`select sum(revenue) as revenue, sum(net_revenue) as net_revenue from ${ORDER_TABLE} where organization_id in (${inList(organizationIds)}) and currency = ? and hour_ms < ?`, [
      ...organizationIds,
      currency,
      Math.trunc(before),
    ]),
  );
  return { revenue: num(row?.revenue), netRevenue: num(row?.net_revenue) };
}

export async function checkoutRollups(db: Executor, organizationIds: readonly string[], currency: string, ranges: readonly HourRange[]) {
  if (!ranges.length || !organizationIds.length) return [];
  const rows = await db.raw(
    `with b(i, lo, hi) as (values ${rangeValues(ranges)})
     select b.i as i, sum(r.checkouts) as checkouts, sum(r.succeeded) as succeeded
     from b join ${CHECKOUT_TABLE} r on r.organization_id in (${inList(organizationIds)}) and r.currency = ? and r.hour_ms >= b.lo and r.hour_ms < b.hi
     group by b.i`,
    [...organizationIds, currency],
  );
  return rowsOf(rows).map((row) => ({ i: num(row.i), checkouts: num(row.checkouts), succeeded: num(row.succeeded) }));
}

/** Per range, the sum of every subscription rollup column (the first range may start at -Infinity: every hour before its end). */
export async function subscriptionRollups(db: Executor, organizationIds: readonly string[], currency: string, ranges: readonly HourRange[]) {
  if (!ranges.length || !organizationIds.length) return [];
  const bounded = ranges.map((r) => ({ lo: Number.isFinite(r.lo) ? r.lo : Number.MIN_SAFE_INTEGER, hi: r.hi }));
  const rows = await db.raw(
    `with b(i, lo, hi) as (values ${rangeValues(bounded)})
     select b.i as i, ${SUBSCRIPTION_VALUES.map((column) => `sum(r.${column}) as ${column}`).join(', ')}
     from b join ${SUBSCRIPTION_TABLE} r on r.organization_id in (${inList(organizationIds)}) and r.currency = ? and r.hour_ms >= b.lo and r.hour_ms < b.hi
     group by b.i`,
    [...organizationIds, currency],
  );
  return rowsOf(rows).map((row) => Object.fromEntries(Object.entries(row).map(([column, value]) => [column, num(value)])));
}

/** knex.raw answers rows on SQLite and a result with `.rows` on PostgreSQL. */
function rowsOf(result: unknown): Record<string, unknown>[] {
  return (Array.isArray(result) ? result : (result as { rows: Record<string, unknown>[] }).rows) as Record<string, unknown>[];
}
