import { CliError, EXIT } from '../../errors.js';
import type { Env, Streams, Style } from '../../output.js';
import { openSession } from '../../resources/session.js';
import { renderTable } from '../../ui/table.js';

export interface QuantitiesOptions {
  server?: string;
  json?: boolean;
  start?: string;
  end?: string;
  interval?: string;
  timezone?: string;
  customer?: string[];
  externalCustomer?: string[];
}

interface Quantities {
  quantities: { timestamp: string; quantity: number }[];
  total: number;
}

const INTERVALS = ['hour', 'day', 'week', 'month', 'year'];
const BAR_WIDTH = 40;

/** A bare date is its midnight UTC; anything else must read as an ISO 8601 time. */
function timeFlag(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T00:00:00Z`;
  if (Number.isNaN(Date.parse(value)) || !/(Z|[+-]\d\d:?\d\d)$/i.test(value)) {
    throw new CliError('INVALID_FLAG', `${flag} "${value}": expected a date (2026-01-31) or an ISO 8601 time with an offset.`, EXIT.invalid);
  }
  return value;
}

/** The bucket label: the date, with the time when buckets are hours. */
const label = (timestamp: string, interval: string) => (interval === 'hour' ? `${timestamp.slice(0, 10)} ${timestamp.slice(11, 16)}` : timestamp.slice(0, 10));

const number = (value: number) => (Number.isInteger(value) ? value.toLocaleString('en-US') : value.toLocaleString('en-US', { maximumFractionDigits: 4 }));

/** One line per bucket: its label, a bar scaled to the largest bucket, the quantity; the total under them. */
export function renderChart(result: Quantities, interval: string, style: Style): string {
  const max = Math.max(0, ...result.quantities.map((bucket) => bucket.quantity));
  const labels = result.quantities.map((bucket) => label(bucket.timestamp, interval));
  const width = Math.max(0, ...labels.map((text) => text.length));
  const lines = result.quantities.map((bucket, index) => {
    const cells = max > 0 ? Math.round((bucket.quantity / max) * BAR_WIDTH) : 0;
    const bar = bucket.quantity > 0 && cells === 0 ? '▏' : '█'.repeat(cells);
    return `${labels[index]!.padEnd(width)}  ${style.green(bar.padEnd(BAR_WIDTH))}  ${number(bucket.quantity)}`;
  });
  return [...lines, `${style.bold('Total'.padEnd(width))}  ${' '.repeat(BAR_WIDTH)}  ${style.bold(number(result.total))}`].join('\n');
}

/**
 * `till meters quantities ID`: the meter's quantity per interval over a range (default: the last 30 days by day),
 * as a bar chart on a terminal, a tab-separated table elsewhere, the API's answer with --json.
 */
export async function meterQuantities(id: string, options: QuantitiesOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const interval = options.interval ?? 'day';
  if (!INTERVALS.includes(interval)) throw new CliError('INVALID_FLAG', `--interval "${interval}": expected one of ${INTERVALS.join(', ')}.`, EXIT.invalid);
  const end = timeFlag('--end', options.end) ?? new Date().toISOString();
  const start = timeFlag('--start', options.start) ?? new Date(Date.parse(end) - 30 * 86_400_000).toISOString();
  const query = new URLSearchParams({ start_timestamp: start, end_timestamp: end, interval, timezone: options.timezone ?? 'UTC' });
  for (const customer of options.customer ?? []) query.append('customer_id', customer);
  for (const customer of options.externalCustomer ?? []) query.append('external_customer_id', customer);
  const result = await session.api.request<Quantities>('GET', `/v1/meters/${encodeURIComponent(id)}/quantities?${query}`);
  session.out.result(result, (style) =>
    streams.stdout.isTTY
      ? renderChart(result, interval, style)
      : renderTable([...result.quantities, { timestamp: 'total', quantity: result.total }], [
          { header: 'TIMESTAMP', value: (bucket) => bucket.timestamp },
          { header: 'QUANTITY', value: (bucket) => String(bucket.quantity) },
        ], { terminal: false, style }),
  );
  return EXIT.ok;
}
