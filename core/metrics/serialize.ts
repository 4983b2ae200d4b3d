import { formatInZone } from '../metering/buckets.js';
import { MAX_INTERVAL_DAYS, MIN_DATE, MIN_INTERVAL_DAYS, TIME_INTERVALS, type MetricsResult } from './schema.js';

/**
 * Polar's MetricsResponse (the one place its wire shape is written): periods stamped in the asked timezone, the
 * totals, and each metric's slug, name and type. `currency` is Till's addition (amounts are never converted).
 */
export function serializeMetrics(result: MetricsResult) {
  return {
    periods: result.periods.map((period) => ({ timestamp: formatInZone(period.timestamp, result.timezone), ...period.values })),
    totals: result.totals,
    metrics: Object.fromEntries(result.metrics.map((metric) => [metric.slug, { slug: metric.slug, display_name: metric.displayName, type: metric.type }])),
    currency: result.currency,
  };
}
export type MetricsWire = ReturnType<typeof serializeMetrics>;

/** Polar's MetricsLimits: the earliest date and the range each interval answers. */
export function serializeMetricsLimits() {
  return {
    min_date: MIN_DATE,
    intervals: Object.fromEntries(TIME_INTERVALS.map((interval) => [interval, { min_days: MIN_INTERVAL_DAYS[interval], max_days: MAX_INTERVAL_DAYS[interval] }])),
  };
}
