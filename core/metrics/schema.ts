import { z } from 'zod';
import { CURRENCIES } from '../billing/shared/currencies.js';
import { TIME_INTERVALS, type TimeInterval } from '../metering/schema.js';

export { TIME_INTERVALS, type TimeInterval };

/** Polar's MetricType: how a value reads (a count, minor units of the currency, a fraction). */
export type MetricType = 'scalar' | 'currency' | 'currency_sub_cent' | 'percentage';

/** Which rows a metric is computed from: the repository query it needs. */
export type MetricSource = 'orders' | 'checkouts' | 'subscriptions';

/**
 * How a metric's value over the whole range (Polar's `totals`) comes from its periods: the sum, the last period's
 * value, or a ratio of two summed metrics.
 */
export type Total = { kind: 'sum' } | { kind: 'last' } | { kind: 'ratio'; numerator: MetricSlug; denominator: MetricSlug };

export interface MetricDefinition {
  slug: MetricSlug;
  displayName: string;
  type: MetricType;
  sources: readonly MetricSource[];
  total: Total;
}

/** The metrics Till computes, in Polar's order and with Polar's slugs (see docs/metrics.md for each definition). */
export const METRIC_SLUGS = [
  'orders',
  'revenue',
  'net_revenue',
  'cumulative_revenue',
  'net_cumulative_revenue',
  'average_order_value',
  'net_average_order_value',
  'one_time_products',
  'one_time_products_revenue',
  'one_time_products_net_revenue',
  'new_subscriptions',
  'new_subscriptions_revenue',
  'new_subscriptions_net_revenue',
  'renewed_subscriptions',
  'renewed_subscriptions_revenue',
  'renewed_subscriptions_net_revenue',
  'active_subscriptions',
  'committed_subscriptions',
  'monthly_recurring_revenue',
  'committed_monthly_recurring_revenue',
  'trial_monthly_recurring_revenue',
  'trial_committed_monthly_recurring_revenue',
  'annual_recurring_revenue',
  'committed_annual_recurring_revenue',
  'average_revenue_per_user',
  'checkouts',
  'succeeded_checkouts',
  'checkouts_conversion',
  'canceled_subscriptions',
  'canceled_subscriptions_customer_service',
  'canceled_subscriptions_low_quality',
  'canceled_subscriptions_missing_features',
  'canceled_subscriptions_switched_service',
  'canceled_subscriptions_too_complex',
  'canceled_subscriptions_too_expensive',
  'canceled_subscriptions_unused',
  'canceled_subscriptions_other',
  'churned_subscriptions',
  'churn_rate',
] as const;
export type MetricSlug = (typeof METRIC_SLUGS)[number];

const SUM: Total = { kind: 'sum' };
const LAST: Total = { kind: 'last' };
const define = (slug: MetricSlug, displayName: string, type: MetricType, sources: readonly MetricSource[], total: Total): MetricDefinition => ({ slug, displayName, type, sources, total });
const REASONS: [MetricSlug, string][] = [
  ['canceled_subscriptions_customer_service', 'Customer Service'],
  ['canceled_subscriptions_low_quality', 'Low Quality'],
  ['canceled_subscriptions_missing_features', 'Missing Features'],
  ['canceled_subscriptions_switched_service', 'Switched Service'],
  ['canceled_subscriptions_too_complex', 'Too Complex'],
  ['canceled_subscriptions_too_expensive', 'Too Expensive'],
  ['canceled_subscriptions_unused', 'Unused'],
  ['canceled_subscriptions_other', 'Other'],
];

export const METRICS: readonly MetricDefinition[] = [
  define('orders', 'Orders', 'scalar', ['orders'], SUM),
  define('revenue', 'Revenue', 'currency', ['orders'], SUM),
  define('net_revenue', 'Net Revenue', 'currency', ['orders'], SUM),
  define('cumulative_revenue', 'Cumulative Revenue', 'currency', ['orders'], LAST),
  define('net_cumulative_revenue', 'Net Cumulative Revenue', 'currency', ['orders'], LAST),
  define('average_order_value', 'Average Order Value', 'currency', ['orders'], { kind: 'ratio', numerator: 'revenue', denominator: 'orders' }),
  define('net_average_order_value', 'Net Average Order Value', 'currency', ['orders'], { kind: 'ratio', numerator: 'net_revenue', denominator: 'orders' }),
  define('one_time_products', 'One-Time Products', 'scalar', ['orders'], SUM),
  define('one_time_products_revenue', 'One-Time Products Revenue', 'currency', ['orders'], SUM),
  define('one_time_products_net_revenue', 'One-Time Products Net Revenue', 'currency', ['orders'], SUM),
  define('new_subscriptions', 'New Subscriptions', 'scalar', ['subscriptions'], SUM),
  define('new_subscriptions_revenue', 'New Subscriptions Revenue', 'currency', ['orders'], SUM),
  define('new_subscriptions_net_revenue', 'New Subscriptions Net Revenue', 'currency', ['orders'], SUM),
  define('renewed_subscriptions', 'Renewed Subscriptions', 'scalar', ['orders'], SUM),
  define('renewed_subscriptions_revenue', 'Renewed Subscriptions Revenue', 'currency', ['orders'], SUM),
  define('renewed_subscriptions_net_revenue', 'Renewed Subscriptions Net Revenue', 'currency', ['orders'], SUM),
  define('active_subscriptions', 'Active Subscriptions', 'scalar', ['subscriptions'], LAST),
  define('committed_subscriptions', 'Committed Subscriptions', 'scalar', ['subscriptions'], LAST),
  define('monthly_recurring_revenue', 'Monthly Recurring Revenue', 'currency', ['subscriptions'], LAST),
  define('committed_monthly_recurring_revenue', 'Committed Monthly Recurring Revenue', 'currency', ['subscriptions'], LAST),
  define('trial_monthly_recurring_revenue', 'Trialing MRR Including Cancelations', 'currency', ['subscriptions'], LAST),
  define('trial_committed_monthly_recurring_revenue', 'Trialing Monthly Recurring Revenue', 'currency', ['subscriptions'], LAST),
  define('annual_recurring_revenue', 'Annual Recurring Revenue', 'currency', ['subscriptions'], LAST),
  define('committed_annual_recurring_revenue', 'Committed Annual Recurring Revenue', 'currency', ['subscriptions'], LAST),
  define('average_revenue_per_user', 'Average Revenue Per User', 'currency', ['subscriptions'], LAST),
  define('checkouts', 'Checkouts', 'scalar', ['checkouts'], SUM),
  define('succeeded_checkouts', 'Succeeded Checkouts', 'scalar', ['checkouts'], SUM),
  define('checkouts_conversion', 'Checkouts Conversion Rate', 'percentage', ['checkouts'], { kind: 'ratio', numerator: 'succeeded_checkouts', denominator: 'checkouts' }),
  define('canceled_subscriptions', 'Canceled Subscriptions', 'scalar', ['subscriptions'], SUM),
  ...REASONS.map(([slug, reason]) => define(slug, `Canceled Subscriptions - ${reason}`, 'scalar', ['subscriptions'], SUM)),
  define('churned_subscriptions', 'Churned Subscriptions', 'scalar', ['subscriptions'], SUM),
  define('churn_rate', 'Churn Rate', 'percentage', ['subscriptions'], LAST),
];

/** The metrics of the cancellation-reason breakdown, by the reason each counts. */
export const REASON_METRICS: ReadonlyMap<MetricSlug, string> = new Map(REASONS.map(([slug]) => [slug, slug.replace('canceled_subscriptions_', '')]));

/** Polar's MIN_DATE (its /v1/metrics/limits answer) and the widest range each interval answers, in days. */
export const MIN_DATE = '2023-01-01';
export const MAX_INTERVAL_DAYS: Record<TimeInterval, number> = { hour: 7, day: 366, week: 7 * 53, month: 365 * 4, year: 365 * 10 };
export const MIN_INTERVAL_DAYS: Record<TimeInterval, number> = { hour: 0, day: 0, week: 14, month: 60, year: 366 };

const DateOnly = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'Use a date such as 2026-03-29')
  .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value), 'Not a calendar date');

/**
 * The query of GET /v1/metrics as Polar takes it (lists may repeat the parameter), plus Till's `currency`. Polar
 * requires the dates and the interval (the SDK always sends them); Till defaults to the last 30 days, by day.
 */
export const MetricsQueryShape = {
  start_date: DateOnly.optional(),
  end_date: DateOnly.optional(),
  interval: z.enum(TIME_INTERVALS).default('day'),
  timezone: z.string().min(1).max(64).default('UTC'),
  /** Amounts are never converted between currencies: the figures count the rows in this one (Till's addition). */
  currency: z.enum(CURRENCIES).optional(),
};

export interface MetricsFilter {
  organizationIds: readonly string[];
  productIds?: readonly string[];
  billingTypes?: readonly ('one_time' | 'recurring')[];
  customerIds?: readonly string[];
}

export interface MetricsRequest extends MetricsFilter {
  startDate: string;
  endDate: string;
  interval: TimeInterval;
  timezone: string;
  currency?: string;
  /** Polar's focus list: only these metrics are computed and answered. */
  metrics?: readonly string[];
}

export type MetricValues = Partial<Record<MetricSlug, number>>;

export interface MetricsResult {
  currency: string;
  timezone: string;
  periods: { timestamp: Date; values: MetricValues }[];
  totals: MetricValues;
  metrics: readonly MetricDefinition[];
}
