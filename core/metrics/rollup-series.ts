import type { Executor } from '../db/database.js';
import type { BucketBounds, CheckoutBucketRow, OrderBucketRow } from './repository.js';
import { HOUR_MS, NEAR_MS, REASONS } from './rollup-rows.js';
import { checkoutRollups, orderRollups, revenueBeforeRollups, subscriptionRollups, type HourRange } from './rollups-repository.js';
import { REASON_METRICS, type MetricSlug, type MetricsRequest } from './schema.js';
import type { Timeline } from './subscriptions.js';

/**
 * The metrics read from the hourly rollups (docs/metrics.md, "Rollups"): the same figures as the raw queries of
 * repository.ts, for the requests the rollups can answer exactly.
 */

/**
 * Whether the rollups answer this request exactly: hours or days, every period and churn window bounded by whole
 * UTC hours (a +05:30 zone's are not: it is read from the rows) and no longer than NEAR_MS, and no filter
 * the rollups are not keyed by (a customer; a product or billing type, since a subscription counts once over all
 * of its orders and a customer once over all of their subscriptions).
 */
export function rollupsAnswer(request: MetricsRequest, timeline: Timeline, bounds: readonly BucketBounds[]): boolean {
  if (request.interval !== 'hour' && request.interval !== 'day') return false;
  if (request.customerIds?.length || request.productIds?.length || new Set(request.billingTypes ?? []).size === 1) return false;
  const whole = (ms: number) => ms % HOUR_MS === 0;
  const instants = [timeline.rangeStart, timeline.rangeEnd + 1, ...timeline.starts, ...timeline.ends, ...timeline.churnWindows.flatMap((w) => [w.from, w.to])];
  if (!instants.every(whole)) return false;
  return bounds.every((b) => b.start === b.lo && whole(b.hi) && b.hi - b.lo <= NEAR_MS);
}

const ranges = (bounds: readonly BucketBounds[]): HourRange[] => bounds.map((b) => ({ lo: b.lo, hi: b.hi }));

/** orderBuckets and revenueBefore of repository.ts, from the rollups. */
export async function orderBucketsFromRollups(db: Executor, request: MetricsRequest, currency: string, bounds: readonly BucketBounds[]): Promise<OrderBucketRow[]> {
  return (await orderRollups(db, request.organizationIds, currency, ranges(bounds))).map((row) => {
    const value = (column: string) => row[column] ?? 0;
    return {
      i: value('i'),
      orders: value('orders'),
      revenue: value('revenue'),
      netRevenue: value('net_revenue'),
      oneTimeProducts: value('one_time_orders'),
      oneTimeRevenue: value('one_time_revenue'),
      oneTimeNetRevenue: value('one_time_net_revenue'),
      newSubscriptionsRevenue: value('fresh_revenue'),
      newSubscriptionsNetRevenue: value('fresh_net_revenue'),
      renewedSubscriptions: value('once_orders') - value('fresh_once_orders') - value('unstarted_once_orders'),
      renewedSubscriptionsRevenue: value('subscription_revenue') - value('fresh_revenue') - value('unstarted_revenue'),
      renewedSubscriptionsNetRevenue: value('subscription_net_revenue') - value('fresh_net_revenue') - value('unstarted_net_revenue'),
    };
  });
}

export const revenueBeforeFromRollups = (db: Executor, request: MetricsRequest, currency: string, before: number) =>
  revenueBeforeRollups(db, request.organizationIds, currency, before);

export const checkoutBucketsFromRollups = (db: Executor, request: MetricsRequest, currency: string, bounds: readonly BucketBounds[]): Promise<CheckoutBucketRow[]> =>
  checkoutRollups(db, request.organizationIds, currency, ranges(bounds));

type Series = Partial<Record<MetricSlug, number[]>>;

/**
 * subscriptionSeries of subscriptions.ts from the rollups: every figure is a sum of the hours before an instant (a
 * period's end for the state metrics, its start and end for the counts, a churn window's bounds), so the rollups
 * are summed between consecutive instants and the sums accumulated.
 */
export async function subscriptionSeriesFromRollups(db: Executor, request: MetricsRequest, currency: string, timeline: Timeline): Promise<Series> {
  const points = [...new Set([...timeline.starts, ...timeline.ends, ...timeline.churnWindows.flatMap((w) => [w.from, w.to])])].sort((a, b) => a - b);
  const segments: HourRange[] = points.map((hi, j) => ({ lo: j === 0 ? Number.NEGATIVE_INFINITY : points[j - 1]!, hi }));
  const sums = new Map((await subscriptionRollups(db, request.organizationIds, currency, segments)).map((row) => [row.i!, row]));
  // before.get(p)[column]: the column summed over every hour before p.
  const before = new Map<number, Record<string, number>>();
  const running: Record<string, number> = {};
  points.forEach((point, j) => {
    for (const [column, value] of Object.entries(sums.get(j) ?? {})) if (column !== 'i') running[column] = (running[column] ?? 0) + value;
    before.set(point, { ...running });
  });
  const at = (point: number, column: string) => before.get(point)?.[column] ?? 0;
  const state = (column: string) => timeline.ends.map((end) => at(end, column));
  const counted = (column: string) => timeline.starts.map((start, k) => at(timeline.ends[k]!, column) - at(start, column));

  const mrr = state('mrr');
  const committedMrr = state('committed_mrr');
  const customers = state('customers');
  const canceledColumns = REASONS.map((reason) => `canceled_${reason}`);
  const canceledBefore = (point: number) => canceledColumns.reduce((total, column) => total + at(point, column), 0);
  const series: Series = {
    active_subscriptions: state('active'),
    committed_subscriptions: state('committed'),
    monthly_recurring_revenue: mrr,
    committed_monthly_recurring_revenue: committedMrr,
    trial_monthly_recurring_revenue: state('trial_mrr'),
    trial_committed_monthly_recurring_revenue: state('trial_committed_mrr'),
    annual_recurring_revenue: mrr.map((v) => v * 12),
    committed_annual_recurring_revenue: committedMrr.map((v) => v * 12),
    average_revenue_per_user: mrr.map((v, k) => (customers[k] ? Math.round(v / customers[k]!) : 0)),
    new_subscriptions: counted('new_subscriptions'),
    churned_subscriptions: counted('churned'),
    canceled_subscriptions: timeline.starts.map((start, k) => canceledBefore(timeline.ends[k]!) - canceledBefore(start)),
    churn_rate: timeline.churnWindows.map(({ from, to }) => {
      const active = at(from, 'starts_incl') - at(from, 'ends_incl');
      const canceled = canceledBefore(to) - canceledBefore(from);
      return active > 0 ? canceled / active : 0;
    }),
  };
  for (const [slug, reason] of REASON_METRICS) series[slug] = counted(`canceled_${reason}`);
  return series;
}
