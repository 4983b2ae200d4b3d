import { monthlyAmount } from './subscriptions.js';
import type { SubscriptionMetricRow } from './repository.js';

/**
 * What each order, subscription and checkout adds to the hourly metrics rollups (migration 0050), as pure
 * functions of the rows: the write path computes a scope's rows before and after a change and adds the
 * difference, the backfill adds them whole. See docs/metrics.md, "Rollups".
 */
export const HOUR_MS = 3_600_000;
/**
 * How far apart (in hours) two instants may be and still share a period that the rollups answer (a day of 25 hours
 * at most): a subscription's start or a previous order further away than this is stored as "far" (-1).
 */
export const NEAR_MS = 48 * HOUR_MS;
export const FAR = -1;

const floorHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;
/** The hour key of an instant `t` such that `t <= X` exactly when the key is before `X` (for whole hours `X`). */
const inclusiveHour = (ms: number) => Math.ceil(ms / HOUR_MS) * HOUR_MS - HOUR_MS;

export const ORDER_TABLE = 'metrics_order_hours';
export const SUBSCRIPTION_TABLE = 'metrics_subscription_hours';
export const CHECKOUT_TABLE = 'metrics_checkout_hours';
export type RollupTable = typeof ORDER_TABLE | typeof SUBSCRIPTION_TABLE | typeof CHECKOUT_TABLE;

export const ORDER_KEY = ['organization_id', 'currency', 'hour_ms', 'product_id', 'kind', 'start_hour_ms', 'prev_hour_ms'] as const;
export const ORDER_VALUES = [
  'orders',
  'revenue',
  'net_revenue',
  'one_time_orders',
  'one_time_revenue',
  'one_time_net_revenue',
  'subscription_revenue',
  'subscription_net_revenue',
  'unstarted_revenue',
  'unstarted_net_revenue',
  'once_orders',
  'unstarted_once_orders',
  'fresh_revenue',
  'fresh_net_revenue',
  'fresh_once_orders',
] as const;
export const CHECKOUT_KEY = ['organization_id', 'currency', 'hour_ms', 'product_id'] as const;
export const CHECKOUT_VALUES = ['checkouts', 'succeeded'] as const;
export const SUBSCRIPTION_KEY = ['organization_id', 'currency', 'hour_ms', 'product_id'] as const;
export const REASONS = ['customer_service', 'low_quality', 'missing_features', 'switched_service', 'too_complex', 'too_expensive', 'unused', 'other'] as const;
export const SUBSCRIPTION_VALUES = [
  'active',
  'committed',
  'mrr',
  'committed_mrr',
  'trial_mrr',
  'trial_committed_mrr',
  'customers',
  'new_subscriptions',
  'churned',
  'starts_incl',
  'ends_incl',
  ...REASONS.map((reason) => `canceled_${reason}` as const),
] as const;

export const KEYS: Record<RollupTable, readonly string[]> = { [ORDER_TABLE]: ORDER_KEY, [SUBSCRIPTION_TABLE]: SUBSCRIPTION_KEY, [CHECKOUT_TABLE]: CHECKOUT_KEY };
export const VALUES: Record<RollupTable, readonly string[]> = { [ORDER_TABLE]: ORDER_VALUES, [SUBSCRIPTION_TABLE]: SUBSCRIPTION_VALUES, [CHECKOUT_TABLE]: CHECKOUT_VALUES };

export interface RollupRow {
  key: Record<string, string | number>;
  values: Record<string, number>;
}
/** Rollup rows by table, then by their key written as one string. */
export type Rollups = Map<RollupTable, Map<string, RollupRow>>;

export const emptyRollups = (): Rollups => new Map([ORDER_TABLE, SUBSCRIPTION_TABLE, CHECKOUT_TABLE].map((t) => [t as RollupTable, new Map()]));

function add(rollups: Rollups, table: RollupTable, key: Record<string, string | number>, values: Record<string, number>) {
  const id = KEYS[table].map((column) => key[column]).join('\u0000');
  const rows = rollups.get(table)!;
  const row = rows.get(id) ?? { key, values: Object.fromEntries(VALUES[table].map((column) => [column, 0])) };
  for (const [column, value] of Object.entries(values)) row.values[column]! += value;
  rows.set(id, row);
}

/** The rows `after` has and `before` has not (value by value): what a change adds to the rollups. */
export function difference(after: Rollups, before: Rollups): Rollups {
  const out = emptyRollups();
  for (const [table, rows] of after) for (const row of rows.values()) add(out, table, row.key, row.values);
  for (const [table, rows] of before) {
    for (const row of rows.values()) add(out, table, row.key, Object.fromEntries(Object.entries(row.values).map(([c, v]) => [c, -v])));
  }
  for (const rows of out.values()) for (const [id, row] of rows) if (Object.values(row.values).every((v) => v === 0)) rows.delete(id);
  return out;
}

export const PAID_STATUSES: readonly string[] = ['paid', 'partially_refunded', 'refunded'];
export const UNSTARTED_STATUSES: readonly string[] = ['incomplete', 'incomplete_expired'];

export interface OrderFacts {
  id: string;
  organizationId: string;
  currency: string;
  productId: string | null;
  subscriptionId: string | null;
  status: string;
  createdAt: number;
  netAmount: number;
  platformFeeAmount: number;
  refundedAmount: number;
}

/**
 * Adds paid orders: one-time orders alone; a subscription's orders all together (`subscriptionStarts` holds when
 * each subscription started, null if never). A subscription counts once per period (by its first order in it) and
 * its orders are new-subscription revenue when it started in the same period: so an order whose subscription
 * started, or whose previous paid order of the subscription (and currency) was, in another hour less than NEAR_MS
 * away is kept apart, keyed by its kind and those hours, and the reader decides per period (`conditional`). Every
 * other order is decided here, whatever the periods (whole hours): its subscription started in its own hour or
 * far away, its previous order in the same hour (never first in a period) or far away (always first), and it is
 * summed with the others of its hour into the columns that say so.
 */
export function addOrders(rollups: Rollups, orders: readonly OrderFacts[], subscriptionStarts: ReadonlyMap<string, number | null>) {
  const paid = orders.filter((o) => PAID_STATUSES.includes(o.status)).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const previous = new Map<string, number>();
  for (const o of paid) {
    const hour = floorHour(o.createdAt);
    const net = o.netAmount - o.platformFeeAmount - o.refundedAmount;
    const values: Record<string, number> = { orders: 1, revenue: o.netAmount, net_revenue: net };
    const key = { organization_id: o.organizationId, currency: o.currency, hour_ms: hour, product_id: o.productId ?? '', kind: '', start_hour_ms: FAR, prev_hour_ms: FAR };
    if (o.subscriptionId === null) {
      Object.assign(values, { one_time_orders: 1, one_time_revenue: o.netAmount, one_time_net_revenue: net });
      add(rollups, ORDER_TABLE, key, values);
      continue;
    }
    const started = subscriptionStarts.get(o.subscriptionId) ?? null;
    const kind = started === null ? 'unstarted' : 'subscription';
    Object.assign(values, { subscription_revenue: o.netAmount, subscription_net_revenue: net });
    if (kind === 'unstarted') Object.assign(values, { unstarted_revenue: o.netAmount, unstarted_net_revenue: net });
    const chain = `${o.subscriptionId}\u0000${o.currency}`;
    const before = previous.get(chain);
    previous.set(chain, hour);
    const startHour = started === null || Math.abs(hour - floorHour(started)) > NEAR_MS ? FAR : floorHour(started);
    const prevHour = before === undefined || hour - before > NEAR_MS ? FAR : before;
    if ((startHour === FAR || startHour === hour) && (prevHour === FAR || prevHour === hour)) {
      const once = prevHour === FAR ? 1 : 0;
      Object.assign(values, { once_orders: once, unstarted_once_orders: kind === 'unstarted' ? once : 0 });
      if (startHour === hour) Object.assign(values, { fresh_revenue: o.netAmount, fresh_net_revenue: net, fresh_once_orders: once });
      add(rollups, ORDER_TABLE, key, values);
    } else add(rollups, ORDER_TABLE, { ...key, kind, start_hour_ms: startHour, prev_hour_ms: prevHour }, values);
  }
}

export interface SubscriptionFacts extends SubscriptionMetricRow {
  organizationId: string;
  currency: string;
  productId: string;
  status: string;
}

/**
 * Adds subscriptions, as changes at the hour they take effect: a subscription counts in the state metrics at a
 * period's end T (a whole hour) when it started before T and ends at or after it — so +1 at its start hour and
 * −1 at its end hour, summed over the hours before T. Its customers must all be here: a customer counts once
 * however many subscriptions they hold (the `customers` column).
 */
export function addSubscriptions(rollups: Rollups, subscriptions: readonly SubscriptionFacts[]) {
  const spans = new Map<string, { key: Record<string, string | number>; spans: { from: number; to: number; product: string }[] }>();
  for (const s of subscriptions) {
    if (UNSTARTED_STATUSES.includes(s.status)) continue;
    const at = (hour: number, values: Record<string, number>) =>
      add(rollups, SUBSCRIPTION_TABLE, { organization_id: s.organizationId, currency: s.currency, hour_ms: hour, product_id: s.productId }, values);
    const start = s.startedAt === null ? 0 : floorHour(s.startedAt);
    const end = s.endsOrEndedAt === null ? null : Math.max(start, floorHour(s.endsOrEndedAt));
    const monthly = monthlyAmount(s.amount, s.recurringInterval, s.recurringIntervalCount);
    const committed = s.endsOrEndedAt === null;
    const paying = s.trialEnd === null ? start : Math.max(start, floorHour(s.trialEnd));
    at(start, { active: 1, ...(committed ? { committed: 1 } : {}) });
    if (end !== null) at(end, { active: -1 });
    at(paying, { mrr: monthly, ...(committed ? { committed_mrr: monthly } : {}) });
    if (end !== null) at(Math.max(paying, end), { mrr: -monthly });
    if (s.trialEnd !== null) {
      const trialOver = end === null ? floorHour(s.trialEnd) : Math.min(floorHour(s.trialEnd), end);
      at(start, { trial_mrr: monthly, ...(committed ? { trial_committed_mrr: monthly } : {}) });
      at(Math.max(start, trialOver), { trial_mrr: -monthly, ...(committed ? { trial_committed_mrr: -monthly } : {}) });
    }
    if (s.startedAt !== null) at(floorHour(s.startedAt), { new_subscriptions: 1 });
    at(s.startedAt === null ? 0 : inclusiveHour(s.startedAt), { starts_incl: 1 });
    if (s.endsOrEndedAt !== null) {
      at(floorHour(s.endsOrEndedAt), { churned: 1 });
      at(inclusiveHour(s.endsOrEndedAt), { ends_incl: 1 });
    }
    if (s.canceledAt !== null) {
      const reason = (REASONS as readonly string[]).includes(s.cancellationReason ?? 'other') ? (s.cancellationReason ?? 'other') : 'other';
      at(floorHour(s.canceledAt), { [`canceled_${reason}`]: 1 });
    }
    if (end !== null && end <= start) continue;
    const id = `${s.organizationId}\u0000${s.currency}\u0000${s.customerId}`;
    const held = spans.get(id) ?? { key: { organization_id: s.organizationId, currency: s.currency }, spans: [] };
    held.spans.push({ from: start, to: end ?? Number.POSITIVE_INFINITY, product: s.productId });
    spans.set(id, held);
  }
  // A customer is counted from the start of the first of overlapping (or touching) subscriptions to the end of the
  // last, on the rows of those subscriptions' products (the customers are only read summed over every product).
  for (const { key, spans: list } of spans.values()) {
    list.sort((a, b) => a.from - b.from);
    let span = { ...list[0]! };
    let first = list[0]!.product;
    const flush = () => {
      add(rollups, SUBSCRIPTION_TABLE, { ...key, hour_ms: span.from, product_id: first }, { customers: 1 });
      if (Number.isFinite(span.to)) add(rollups, SUBSCRIPTION_TABLE, { ...key, hour_ms: span.to, product_id: span.product }, { customers: -1 });
    };
    for (const next of list.slice(1)) {
      if (next.from <= span.to) {
        if (next.to > span.to) span = { ...span, to: next.to, product: next.product };
      } else {
        flush();
        span = { ...next };
        first = next.product;
      }
    }
    flush();
  }
}

export interface CheckoutFacts {
  organizationId: string;
  currency: string;
  productId: string;
  status: string;
  createdAt: number;
}

export function addCheckouts(rollups: Rollups, checkouts: readonly CheckoutFacts[]) {
  for (const c of checkouts) {
    const key = { organization_id: c.organizationId, currency: c.currency, hour_ms: floorHour(c.createdAt), product_id: c.productId };
    add(rollups, CHECKOUT_TABLE, key, { checkouts: 1, succeeded: c.status === 'succeeded' ? 1 : 0 });
  }
}
