import { dialectOf, type Executor } from '../db/database.js';
import { CoreError } from '../errors.js';
import { addCalendarDays, bucketsBetween, isTimeZone, nextBucketStart, startOfDay } from '../metering/buckets.js';
import { checkoutBuckets, defaultCurrencies, orderBuckets, revenueBefore, subscriptionsBetween, type BucketBounds } from './repository.js';
import { MAX_INTERVAL_DAYS, METRICS, type MetricDefinition, type MetricSlug, type MetricSource, type MetricsRequest, type MetricsResult, type MetricValues } from './schema.js';
import { subscriptionSeries, type Timeline } from './subscriptions.js';
import { checkoutBucketsFromRollups, orderBucketsFromRollups, revenueBeforeFromRollups, rollupsAnswer, subscriptionSeriesFromRollups } from './rollup-series.js';

const invalid = (loc: string[], msg: string) => new CoreError('invalid', 'INVALID_METRICS_QUERY', msg, [{ loc, msg, type: 'value_error' }]);

const DAY_MS = 86_400_000;
const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;

/** The metrics asked for (all when none are named), each with the ones its totals are computed from. */
function selectedMetrics(request: MetricsRequest): readonly MetricDefinition[] {
  if (!request.metrics?.length) return METRICS;
  const wanted = new Set(request.metrics);
  const unknown = [...wanted].filter((slug) => !METRICS.some((metric) => metric.slug === slug)).sort();
  if (unknown.length) throw invalid(['query', 'metrics'], `Invalid metric slugs: ${unknown.join(', ')}`);
  return METRICS.filter((metric) => wanted.has(metric.slug));
}

/** The currency the figures are in: the one asked for, else the default most of the organizations share. */
async function currencyOf(db: Executor, request: MetricsRequest): Promise<string> {
  if (request.currency) return request.currency;
  const counts = new Map<string, number>();
  for (const currency of await defaultCurrencies(db, request.organizationIds)) counts.set(currency, (counts.get(currency) ?? 0) + 1);
  const [best] = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return best?.[0] ?? 'usd';
}

/** `rollups: false` reads the rows even when the rollups would answer (the tests compare the two). */
export interface MetricsOptions {
  rollups?: boolean;
}

/**
 * GET /v1/metrics: Polar's metrics of the organizations' orders, checkouts and subscriptions, one period per
 * interval of the timezone's calendar from `startDate` to `endDate` (both whole days), with their totals.
 */
export async function getMetrics(db: Executor, request: MetricsRequest, options: MetricsOptions = {}): Promise<MetricsResult> {
  return withAnalyticsSettings(db, (executor) => computeMetrics(executor, request, options));
}

/**
 * PostgreSQL plans the bucket joins for millions of rows it never meets (it cannot see through the VALUES list),
 * so it would compile the query with JIT, which cost more than the query itself (seconds on a busy machine), and
 * sort on disk for want of work memory. The metrics read in one transaction with JIT off and room to
 * sort in memory; SQLite has neither setting and reads as it is.
 */
async function withAnalyticsSettings<T>(db: Executor, read: (executor: Executor) => Promise<T>): Promise<T> {
  if (dialectOf(db) !== 'postgres') return read(db);
  return db.transaction(async (trx) => {
    await trx.raw('set local jit = off');
    await trx.raw(`set local work_mem = '64MB'`);
    return read(trx);
  });
}

async function computeMetrics(db: Executor, request: MetricsRequest, options: MetricsOptions): Promise<MetricsResult> {
  if (!isTimeZone(request.timezone)) throw invalid(['query', 'timezone'], `Unknown timezone: ${request.timezone}`);
  const days = dayNumber(request.endDate) - dayNumber(request.startDate);
  if (days < 0) throw invalid(['query', 'end_date'], 'The end date is before the start date.');
  if (days > MAX_INTERVAL_DAYS[request.interval]) {
    throw invalid(['query'], 'The interval is too small for the given date range. Use a larger interval or reduce the date range.');
  }

  const rangeStart = startOfDay(request.startDate, request.timezone).getTime();
  const nextDay = new Date(Date.parse(`${request.endDate}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
  const rangeEnd = startOfDay(nextDay, request.timezone).getTime() - 1;
  const buckets = bucketsBetween(new Date(rangeStart), new Date(rangeEnd), request.interval, request.timezone, Number.MAX_SAFE_INTEGER) ?? [];
  const starts = buckets.map((b) => b.start.getTime());
  const ends = starts.map((_, k) => (k + 1 < starts.length ? starts[k + 1]! : nextBucketStart(buckets[k]!.start, request.interval, request.timezone).getTime()));
  const churnWindows = starts.map((start, k) =>
    request.interval === 'year' ? { from: start, to: ends[k]! } : { from: addCalendarDays(new Date(start), -30, request.timezone).getTime(), to: start },
  );
  const timeline: Timeline = { starts, ends, rangeStart, rangeEnd, churnWindows };
  const bounds: BucketBounds[] = buckets.map((b) => ({ start: b.start.getTime(), lo: b.from, hi: b.to }));

  const metrics = selectedMetrics(request);
  const needs = (source: MetricSource) => metrics.some((metric) => metric.sources.includes(source));
  const currency = await currencyOf(db, request);
  const filter = request;
  // The hourly rollups when they answer this request exactly, else the rows (the same figures, slower).
  const rollups = options.rollups !== false && rollupsAnswer(request, timeline, bounds);

  const n = starts.length;
  const series: Partial<Record<MetricSlug, number[]>> = {};
  const column = (slug: MetricSlug) => (series[slug] ??= new Array<number>(n).fill(0));

  if (needs('orders')) {
    for (const row of await (rollups ? orderBucketsFromRollups : orderBuckets)(db, filter, currency, bounds)) {
      const set = (slug: MetricSlug, value: number) => (column(slug)[row.i] = value);
      set('orders', row.orders);
      set('revenue', row.revenue);
      set('net_revenue', row.netRevenue);
      set('one_time_products', row.oneTimeProducts);
      set('one_time_products_revenue', row.oneTimeRevenue);
      set('one_time_products_net_revenue', row.oneTimeNetRevenue);
      set('new_subscriptions_revenue', row.newSubscriptionsRevenue);
      set('new_subscriptions_net_revenue', row.newSubscriptionsNetRevenue);
      set('renewed_subscriptions', row.renewedSubscriptions);
      set('renewed_subscriptions_revenue', row.renewedSubscriptionsRevenue);
      set('renewed_subscriptions_net_revenue', row.renewedSubscriptionsNetRevenue);
    }
    const orders = column('orders');
    const revenue = column('revenue');
    const net = column('net_revenue');
    // Polar rounds a period's average order value up to the next minor unit.
    series.average_order_value = revenue.map((value, k) => (orders[k] ? Math.ceil(value / orders[k]!) : 0));
    series.net_average_order_value = net.map((value, k) => (orders[k] ? Math.ceil(value / orders[k]!) : 0));
    const before = await (rollups ? revenueBeforeFromRollups : revenueBefore)(db, filter, currency, rangeStart);
    let cumulative = before.revenue;
    let netCumulative = before.netRevenue;
    series.cumulative_revenue = revenue.map((value) => (cumulative += value));
    series.net_cumulative_revenue = net.map((value) => (netCumulative += value));
  }
  if (needs('checkouts')) {
    for (const row of await (rollups ? checkoutBucketsFromRollups : checkoutBuckets)(db, filter, currency, bounds)) {
      column('checkouts')[row.i] = row.checkouts;
      column('succeeded_checkouts')[row.i] = row.succeeded;
    }
    const checkouts = column('checkouts');
    series.checkouts_conversion = column('succeeded_checkouts').map((succeeded, k) => (checkouts[k] ? succeeded / checkouts[k]! : 0));
  }
  if (needs('subscriptions') && rollups) Object.assign(series, await subscriptionSeriesFromRollups(db, request, currency, timeline));
  else if (needs('subscriptions')) {
    const earliest = Math.min(rangeStart, ...churnWindows.map((w) => w.from));
    const latest = Math.max(rangeEnd, ...churnWindows.map((w) => w.to));
    Object.assign(series, subscriptionSeries(timeline, await subscriptionsBetween(db, filter, currency, earliest, latest)));
  }

  const periods = starts.map((start, k) => {
    const values: MetricValues = {};
    for (const metric of metrics) values[metric.slug] = series[metric.slug]?.[k] ?? 0;
    return { timestamp: new Date(start), values };
  });
  return { currency, timezone: request.timezone, periods, totals: totalsOf(metrics, series, n), metrics };
}

/** Each metric over the whole range: summed, its last period, or the ratio of two sums (Polar's get_cumulative). */
function totalsOf(metrics: readonly MetricDefinition[], series: Partial<Record<MetricSlug, number[]>>, n: number): MetricValues {
  const sum = (slug: MetricSlug) => (series[slug] ?? []).reduce((a, b) => a + b, 0);
  const totals: MetricValues = {};
  for (const metric of metrics) {
    const values = series[metric.slug] ?? [];
    if (metric.total.kind === 'sum') totals[metric.slug] = sum(metric.slug);
    else if (metric.total.kind === 'last') totals[metric.slug] = n ? (values[n - 1] ?? 0) : 0;
    else {
      const denominator = sum(metric.total.denominator);
      totals[metric.slug] = denominator ? sum(metric.total.numerator) / denominator : 0;
    }
  }
  return totals;
}
