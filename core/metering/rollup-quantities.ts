import type { Knex } from 'knex';
import type { Executor } from '../db/database.js';
import { fromDbInt } from '../db/columns.js';
import type { Bucket } from './buckets.js';
import { EMPTY_PARTIAL, HOUR_MS, hourOf, mergePartials, partialColumns, quantityOf, toPartial, type Partial } from './partials.js';
import { dialectOf } from '../db/database.js';
import { EVERYONE_KEYS } from './rollups.js';
import type { AggregationFunction, Meter } from './schema.js';

/** A piece of a bucket: `i` the bucket, [lo, hi) the instants. */
interface Span {
  i: number;
  lo: number;
  hi: number;
}

const ceilHour = (ms: number) => (hourOf(ms) === ms ? ms : hourOf(ms) + HOUR_MS);

/**
 * Splits buckets into whole UTC hours (read from the rollups) and the minutes at their edges (read from the
 * events): a day in a whole-hour timezone is 24 rolled-up hours; a bucket of a +05:30 zone, or a range starting
 * mid-hour, also reads the events of its partial hours.
 */
export function splitBuckets(buckets: readonly Bucket[]): { hours: Span[]; edges: Span[] } {
  const hours: Span[] = [];
  const edges: Span[] = [];
  buckets.forEach((bucket, i) => {
    const lo = ceilHour(bucket.from);
    const hi = hourOf(bucket.to);
    if (lo < hi) {
      hours.push({ i, lo, hi });
      if (bucket.from < lo) edges.push({ i, lo: bucket.from, hi: lo });
      if (hi < bucket.to) edges.push({ i, lo: hi, hi: bucket.to });
    } else if (bucket.from < bucket.to) edges.push({ i, lo: bucket.from, hi: bucket.to });
  });
  return { hours, edges };
}

/** Past this many whole-hour spans, rollups are read by one range scan instead of a join on the spans. */
const MANY_SPANS = 100;

/** The span holding the hour starting at `hourMs` (spans in ascending order, not overlapping), if any. */
function spanOf(spans: readonly Span[], hourMs: number): Span | undefined {
  let low = 0;
  let high = spans.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const span = spans[middle]!;
    if (hourMs < span.lo) high = middle - 1;
    else if (hourMs >= span.hi) low = middle + 1;
    else return span;
  }
  return undefined;
}

const valuesOf = (spans: readonly Span[]) => spans.map((span) => `(${span.i}, ${span.lo}, ${span.hi})`).join(', ');

export interface RollupScope {
  /** Rollup keys to read: customer ids and `x:<external id>`; undefined for everyone. */
  keys?: readonly string[];
  /** Per customer (for a customer aggregation function). */
  perCustomer: boolean;
}

/** Partials by bucket (and by customer when asked), keyed `${i}` or `${i}\0${customer}`. */
type Partials = Map<string, Partial>;

function add(into: Partials, key: string, partial: Partial) {
  const current = into.get(key);
  into.set(key, current ? mergePartials(current, partial) : partial);
}

/**
 * The partials of each bucket from a meter's hourly rollups, and from the events (`condition`, the same the raw
 * aggregation uses) for the parts of buckets that are not whole hours.
 */
export async function rollupPartials(
  db: Executor,
  meter: Meter,
  buckets: readonly Bucket[],
  scope: RollupScope,
  condition: { sql: string; bindings: Knex.RawBinding[] },
  customerKeySql: string,
): Promise<Partials> {
  const { hours, edges } = splitBuckets(buckets);
  const partials: Partials = new Map();
  if (hours.length) {
    const bindings: Knex.RawBinding[] = [];
    // An `x:<external id>` key counts for the customer holding that external id now (its events' customer), as the events' reading does.
    const key = `case when r.customer_key like 'x:%' then coalesce((select c.id from customers c where c.organization_id = ? and c.external_id = substr(r.customer_key, 3) and c.deleted_at is null), substr(r.customer_key, 3)) else r.customer_key end`;
    if (scope.perCustomer) bindings.push(meter.organizationId);
    bindings.push(meter.id);
    let keyCondition: string;
    if (scope.keys) {
      keyCondition = scope.keys.length ? `r.customer_key in (${scope.keys.map(() => '?').join(', ')})` : '1 = 0';
      bindings.push(...scope.keys);
    } else {
      keyCondition = `r.customer_key ${scope.perCustomer ? 'not in' : 'in'} (${EVERYONE_KEYS.map(() => '?').join(', ')})`;
      bindings.push(...EVERYONE_KEYS);
    }
    const columns = 'sum(r.events) as events, sum(r.numbers) as numbers, sum(r.total) as total, min(r.smallest) as smallest, max(r.largest) as largest';
    if (!scope.perCustomer && hours.length > MANY_SPANS) {
      // Many small buckets (a quarter by hour is 2,160): one range scan summed by hour, each hour put in its bucket
      // here, instead of a join probing the rollups once per bucket (170-210 ms on PostgreSQL for 2,160 hours).
      const result = await db.raw(
        `select r.hour_ms as h, ${columns} from meter_rollups r where r.meter_id = ? and ${keyCondition} and r.hour_ms >= ? and r.hour_ms < ? group by r.hour_ms`,
        [...bindings, hours[0]!.lo, hours[hours.length - 1]!.hi],
      );
      const rows: Record<string, unknown>[] = Array.isArray(result) ? result : result.rows;
      for (const row of rows) {
        const span = spanOf(hours, fromDbInt(row.h));
        if (span) add(partials, String(span.i), toPartial(row));
      }
    } else {
      // With the keys listed, the buckets are the outer loop, each a range of the rollups' primary key per key:
      // SQLite's planner otherwise ran over all the meter's rollups of those keys and compared each with every bucket
      // (270 ms for a quarter by day at 10,000,000 events; over 21,600 hours of rollups, 3.4 s against 20 ms with the
      // buckets first; CROSS JOIN fixes the order). Everyone's figures per customer (keys not in a list) have no such
      // range, and read the meter's rollups once as before. PostgreSQL plans this join well by itself.
      const bucketsFirst = dialectOf(db) === 'sqlite' && !(scope.perCustomer && !scope.keys);
      const sql =
        `with b(i, lo, hi) as (values ${valuesOf(hours)}) select b.i as i, ${scope.perCustomer ? `${key} as k,` : ''} ${columns} ` +
        `from b ${bucketsFirst ? 'cross join' : 'join'} meter_rollups r on r.meter_id = ? and ${keyCondition} and r.hour_ms >= b.lo and r.hour_ms < b.hi ` +
        `group by b.i${scope.perCustomer ? ', k' : ''}`;
      const result = await db.raw(sql, bindings);
      const rows: Record<string, unknown>[] = Array.isArray(result) ? result : result.rows;
      for (const row of rows) add(partials, scope.perCustomer ? `${Number(row.i)}\u0000${String(row.k)}` : String(Number(row.i)), toPartial(row));
    }
  }
  if (edges.length) {
    const columns = partialColumns(dialectOf(db), meter, 'e');
    const perCustomer = scope.perCustomer ? `${customerKeySql} as k,` : '';
    // Each span an index range scan of its own. PostgreSQL planned the join below as a scan of all the meter's events
    // against the spans (0.3 s at 300,000 events for a sum, whose values are in the table, not the index), so there
    // each span is a LATERAL subquery; SQLite already loops over the spans outside.
    const sql =
      dialectOf(db) === 'postgres'
        ? `with b(i, lo, hi) as (values ${valuesOf(edges)}) select b.i as i, p.* from b cross join lateral ` +
          `(select ${perCustomer} ${columns.sql} from events e where e.timestamp_ms >= b.lo and e.timestamp_ms < b.hi and ${condition.sql}${scope.perCustomer ? ' group by k' : ''}) p`
        : `with b(i, lo, hi) as (values ${valuesOf(edges)}) select b.i as i, ${perCustomer} ${columns.sql} ` +
          `from b join events e on e.timestamp_ms >= b.lo and e.timestamp_ms < b.hi and ${condition.sql} group by b.i${scope.perCustomer ? ', k' : ''}`;
    const result = await db.raw(sql, [...columns.bindings, ...condition.bindings] as Knex.RawBinding[]);
    const rows: Record<string, unknown>[] = Array.isArray(result) ? result : result.rows;
    for (const row of rows) add(partials, scope.perCustomer ? `${Number(row.i)}\u0000${String(row.k)}` : String(Number(row.i)), toPartial(row));
  }
  return partials;
}

/** A customer's figure as the raw per-customer aggregation gives it: NULL for max, min and avg without a numeric value. */
function customerFigure(meter: Meter, partial: Partial): number | null {
  const func = meter.aggregation.func;
  if ((func === 'max' || func === 'min' || func === 'avg') && partial.numbers === 0) return null;
  return quantityOf(meter.aggregation, partial);
}

/** The customer aggregation function over customers' figures (NULLs left out, as SQL's aggregates do; no figure: 0). */
function across(func: AggregationFunction, figures: readonly (number | null)[]): number {
  const values = figures.filter((value): value is number => value !== null);
  switch (func) {
    case 'count':
      return values.length;
    case 'sum':
      return values.reduce((sum, value) => sum + value, 0);
    case 'max':
      return values.length ? Math.max(...values) : 0;
    case 'min':
      return values.length ? Math.min(...values) : 0;
    case 'avg':
      return values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : 0;
    case 'unique':
      return new Set(values).size;
  }
}

/** Each bucket's quantity and the total over all of them, from the partials (see rollupPartials). */
export function quantitiesFromPartials(meter: Meter, bucketCount: number, partials: Partials, customerAggregation?: AggregationFunction): { perBucket: number[]; total: number } {
  if (!customerAggregation) {
    const perBucket: number[] = [];
    let whole = EMPTY_PARTIAL;
    for (let i = 0; i < bucketCount; i++) {
      const partial = partials.get(String(i)) ?? EMPTY_PARTIAL;
      perBucket.push(quantityOf(meter.aggregation, partial));
      whole = mergePartials(whole, partial);
    }
    const func = meter.aggregation.func;
    // A count or sum's total is the sum of its buckets (the same additions the raw path makes).
    const total = func === 'count' || func === 'sum' ? perBucket.reduce((sum, value) => sum + value, 0) : quantityOf(meter.aggregation, whole);
    return { perBucket, total };
  }
  const byBucket = new Map<number, (number | null)[]>();
  const byCustomer = new Map<string, Partial>();
  for (const [key, partial] of partials) {
    const separator = key.indexOf('\u0000');
    const i = Number(key.slice(0, separator));
    const customer = key.slice(separator + 1);
    const figures = byBucket.get(i) ?? [];
    figures.push(customerFigure(meter, partial));
    byBucket.set(i, figures);
    add(byCustomer, customer, partial);
  }
  const perBucket = Array.from({ length: bucketCount }, (_, i) => across(customerAggregation, byBucket.get(i) ?? []));
  const total = across(customerAggregation, [...byCustomer.values()].map((partial) => customerFigure(meter, partial)));
  return { perBucket, total };
}
