import { CliError, EXIT } from '../../errors.js';
import type { Env, Streams, Style } from '../../output.js';
import { openSession, organizationId } from '../../resources/session.js';
import { renderTable } from '../../ui/table.js';
import { sparkline } from '../../ui/sparkline.js';

export interface MetricsOptions {
  server?: string;
  json?: boolean;
  org?: string;
  from?: string;
  to?: string;
  interval?: string;
  timezone?: string;
  product?: string[];
  currency?: string;
}

export interface MetricsAnswer {
  periods: ({ timestamp: string } & Record<string, number>)[];
  totals: Record<string, number>;
  metrics: Record<string, { slug: string; display_name: string; type: string }>;
  currency: string;
}

const INTERVALS = ['hour', 'day', 'week', 'month', 'year'];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The figures `till metrics` shows, in this order (every other one is in --json). */
export const SHOWN = [
  'revenue',
  'net_revenue',
  'orders',
  'average_order_value',
  'one_time_products_revenue',
  'renewed_subscriptions_revenue',
  'new_subscriptions',
  'renewed_subscriptions',
  'active_subscriptions',
  'monthly_recurring_revenue',
  'committed_monthly_recurring_revenue',
  'average_revenue_per_user',
  'checkouts',
  'checkouts_conversion',
  'canceled_subscriptions',
  'churned_subscriptions',
  'churn_rate',
] as const;

/** A value as its metric type reads: money in major units with the currency, fractions as percentages. */
export function formatMetric(value: number, type: string, currency: string): string {
  if (type === 'percentage') return `${(value * 100).toFixed(1)}%`;
  if (type === 'currency' || type === 'currency_sub_cent') {
    return `${(value / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${currency.toUpperCase()}`;
  }
  return Number.isInteger(value) ? value.toLocaleString('en-US') : value.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

const periodLabel = (timestamp: string, interval: string) => (interval === 'hour' ? `${timestamp.slice(0, 10)} ${timestamp.slice(11, 16)}` : timestamp.slice(0, 10));

/** On a terminal: a table of the metrics, each with its trend over the periods as a sparkline and its total. */
export function renderSparklines(answer: MetricsAnswer, interval: string, style: Style): string {
  const shown = SHOWN.filter((slug) => answer.metrics[slug]);
  const first = answer.periods[0]?.timestamp;
  const last = answer.periods.at(-1)?.timestamp;
  const header = first && last ? `${periodLabel(first, interval)} → ${periodLabel(last, interval)}, ${answer.periods.length} × ${interval}` : 'no periods';
  const table = renderTable(shown, [
    { header: 'METRIC', value: (slug) => answer.metrics[slug]!.display_name },
    { header: 'TREND', value: (slug) => sparkline(answer.periods.map((period) => period[slug] ?? 0), 40), max: 40 },
    { header: 'TOTAL', value: (slug) => formatMetric(answer.totals[slug] ?? 0, answer.metrics[slug]!.type, answer.currency) },
  ], { terminal: true, style });
  return `${style.dim(header)}\n${table}`;
}

/** Off a terminal: a table, one row per period, a column per shown metric (amounts in minor units). */
function renderPeriods(answer: MetricsAnswer, style: Style): string {
  const shown = SHOWN.filter((slug) => answer.metrics[slug]);
  return renderTable(answer.periods, [{ header: 'TIMESTAMP', value: (period) => period.timestamp }, ...shown.map((slug) => ({ header: slug.toUpperCase(), value: (period: MetricsAnswer['periods'][number]) => String(period[slug] ?? 0) }))], { terminal: false, style });
}

function dateFlag(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!DATE.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) throw new CliError('INVALID_FLAG', `${flag} "${value}": expected a date such as 2026-01-31.`, EXIT.invalid);
  return value;
}

/**
 * `till metrics`: the organization's revenue, orders, MRR, subscriptions, checkouts and churn over a range
 * (default: the last 30 days by day) — sparklines and totals on a terminal, a table elsewhere, the API's answer
 * with --json.
 */
export async function metrics(options: MetricsOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const interval = options.interval ?? 'day';
  if (!INTERVALS.includes(interval)) throw new CliError('INVALID_FLAG', `--interval "${interval}": expected one of ${INTERVALS.join(', ')}.`, EXIT.invalid);
  const from = dateFlag('--from', options.from);
  const to = dateFlag('--to', options.to);
  const query = new URLSearchParams({ interval, timezone: options.timezone ?? 'UTC' });
  if (from) query.set('start_date', from);
  if (to) query.set('end_date', to);
  if (from && !to) query.set('end_date', new Date().toISOString().slice(0, 10));
  for (const product of options.product ?? []) query.append('product_id', product);
  if (options.currency) query.set('currency', options.currency.toLowerCase());
  const org = await organizationId(session, options.org);
  if (org) query.set('organization_id', org);
  const answer = await session.api.request<MetricsAnswer>('GET', `/v1/metrics/?${query}`);
  session.out.result(answer, (style) => (streams.stdout.isTTY ? renderSparklines(answer, interval, style) : renderPeriods(answer, style)));
  return EXIT.ok;
}
