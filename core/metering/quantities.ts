import type { Knex } from 'knex';
import { dialectOf, type Executor } from '../db/database.js';
import { CoreError } from '../errors.js';
import { bucketsBetween, isTimeZone, type Bucket } from './buckets.js';
import { compileAggregation, compileFilter, compileMetadataFilters, toQuantity } from './compile.js';
import type { AggregationFunction, Meter, TimeInterval } from './schema.js';
import { isPartialMeter } from './partials.js';
import { quantitiesFromPartials, rollupPartials } from './rollup-quantities.js';
import { readyMeters, unknownCustomerKey } from './rollups.js';

/** Most buckets one quantities call answers (a year of hours). */
export const MAX_BUCKETS = 8784;

export interface QuantitiesQuery {
  start: Date;
  end: Date;
  interval: TimeInterval;
  timezone: string;
  customerIds?: readonly string[];
  externalCustomerIds?: readonly string[];
  metadata?: Record<string, string[]>;
  /** Aggregate per customer first, then across customers with this function (Polar's customer_aggregation_function). */
  customerAggregationFunction?: AggregationFunction;
}

export interface Quantities {
  quantities: { timestamp: Date; quantity: number }[];
  total: number;
}

const invalid = (field: string, msg: string) => new CoreError('invalid', 'INVALID_QUANTITIES_QUERY', msg, [{ loc: ['query', field], msg, type: 'value_error' }]);

/**
 * Customers named by id or by external id, as both: a customer's events are those sent with its id and those sent
 * with its external id, whether or not the customer existed when they were ingested (Polar resolves them so).
 */
export async function sameCustomers(db: Executor, organizationId: string, customerIds: readonly string[], externalIds: readonly string[]): Promise<{ ids: string[]; external: string[] }> {
  const ids = new Set(customerIds);
  const external = new Set(externalIds);
  if (ids.size || external.size) {
    const rows = await db('customers')
      .where({ organization_id: organizationId })
      .whereNotNull('external_id')
      .where((q) => q.whereIn('id', [...ids]).orWhereIn('external_id', [...external]))
      .select('id', 'external_id');
    for (const row of rows) {
      ids.add(String(row.id));
      external.add(String(row.external_id));
    }
  }
  return { ids: [...ids], external: [...external] };
}

/**
 * The customer an event belongs to, as a SQL expression over the events aliased `e`: its customer_id, else the
 * customer holding its external id now, else the external id itself (a customer not created yet).
 */
export const customerKeySql = (alias = 'e') =>
  `coalesce(${alias}.customer_id, (select c.id from customers c where c.organization_id = ${alias}.organization_id and c.external_id = ${alias}.external_customer_id and c.deleted_at is null), ${alias}.external_customer_id)`;

/** The events condition shared by the bucket query and the total: the meter's organization, filter, customers. */
async function eventsCondition(db: Executor, meter: Meter, query: QuantitiesQuery, same: { ids: string[]; external: string[] } | undefined) {
  const dialect = dialectOf(db);
  const filter = compileFilter(dialect, meter.filter, 'e');
  const parts = [`e.organization_id = ?`, `e.source = 'user'`, filter.sql];
  const bindings: Knex.RawBinding[] = [meter.organizationId, ...filter.bindings];
  if (same) {
    const { ids, external } = same;
    const inList = (values: readonly string[]) => values.map(() => '?').join(', ');
    // One IN when there is one kind of id: an OR across two columns keeps both databases off their indexes.
    if (ids.length && external.length) parts.push(`(e.customer_id in (${inList(ids)}) or e.external_customer_id in (${inList([...external])}))`);
    else if (ids.length) parts.push(`e.customer_id in (${inList(ids)})`);
    else if (external.length) parts.push(`e.external_customer_id in (${inList([...external])})`);
    else parts.push('1 = 0');
    bindings.push(...ids, ...external);
  }
  if (query.metadata && Object.keys(query.metadata).length) {
    const metadata = compileMetadataFilters(dialect, query.metadata, 'e');
    parts.push(metadata.sql);
    bindings.push(...metadata.bindings);
  }
  return { sql: parts.join(' and '), bindings };
}

const OUTER: Record<AggregationFunction, (value: string) => string> = {
  count: (value) => `count(${value})`,
  sum: (value) => `coalesce(sum(${value}), 0)`,
  max: (value) => `max(${value})`,
  min: (value) => `min(${value})`,
  avg: (value) => `avg(${value})`,
  unique: (value) => `count(distinct ${value})`,
};

/**
 * The aggregate of each bucket, by bucket index (buckets without events may be missing). The bucket bounds are
 * integers Till computed: written inline, they cost no bindings however many buckets there are. With a customer aggregation function, the meter's
 * aggregation runs per customer and bucket first, and that function over the customers' figures.
 */
async function bucketQuery(db: Executor, meter: Meter, query: QuantitiesQuery, condition: { sql: string; bindings: Knex.RawBinding[] }, buckets: readonly Bucket[]): Promise<Map<number, number>> {
  const aggregation = compileAggregation(dialectOf(db), meter.aggregation, 'e');
  let sql: string;
  if (!query.customerAggregationFunction) {
    // A VALUES list of the buckets, each bucket's figure a subquery over its index range: on SQLite a join grouped by
    // bucket sorted every event through a temporary B-tree (three times slower at a million events), and on
    // PostgreSQL this beat one width_bucket scan grouped by bucket (npm run bench compares both forms).
    const values = buckets.map((bucket, i) => `(${i}, ${bucket.from}, ${bucket.to})`).join(', ');
    sql = `with b(i, lo, hi) as (values ${values}) select b.i as i, (select ${aggregation.sql} from events e where e.timestamp_ms >= b.lo and e.timestamp_ms < b.hi and ${condition.sql}) as q from b`;
  } else if (dialectOf(db) === 'postgres') {
    // PostgreSQL: one range scan, each event put in its bucket by width_bucket's binary search over the bounds
    // (a join to a VALUES list of buckets was planned as a loop over every event).
    const bounds = `array[${buckets.map((bucket) => bucket.from).join(', ')}]::bigint[]`;
    const range = `e.timestamp_ms >= ${buckets[0]!.from} and e.timestamp_ms < ${buckets[buckets.length - 1]!.to} and ${condition.sql}`;
    const bucketOf = `width_bucket(e.timestamp_ms, ${bounds}) - 1`;
    sql = `select per.i as i, ${OUTER[query.customerAggregationFunction]('per.q')} as q from (select ${bucketOf} as i, ${customerKeySql('e')} as k, ${aggregation.sql} as q from events e where ${range} group by 1, 2) per group by per.i`;
  } else {
    // SQLite, per customer first: a VALUES list of the buckets joined to the events, each bucket an index range scan.
    const values = buckets.map((bucket, i) => `(${i}, ${bucket.from}, ${bucket.to})`).join(', ');
    const inBucket = `e.timestamp_ms >= b.lo and e.timestamp_ms < b.hi and ${condition.sql}`;
    sql =
      `with b(i, lo, hi) as (values ${values}), per as (select b.i as i, ${customerKeySql('e')} as k, ${aggregation.sql} as q from b join events e on ${inBucket} group by b.i, ${customerKeySql('e')}) ` +
      `select b.i as i, ${OUTER[query.customerAggregationFunction]('per.q')} as q from b left join per on per.i = b.i group by b.i`;
  }
  const result = await db.raw(sql, [...aggregation.bindings, ...condition.bindings] as Knex.RawBinding[]);
  const rows: { i: number | string; q: unknown }[] = Array.isArray(result) ? result : result.rows;
  return new Map(rows.map((row) => [Number(row.i), toQuantity(row.q)]));
}

/**
 * A meter's quantity per interval between two instants, and over the whole range: from the meter's hourly rollups
 * when they can answer (core/metering/rollup-quantities.ts), else computed from the events by the database in one
 * query (each bucket an index range scan; see bucketQuery). `source` forces one way (tests, the benchmark).
 */
export async function meterQuantities(db: Executor, meter: Meter, query: QuantitiesQuery, options: { source?: 'events' | 'rollups' } = {}): Promise<Quantities> {
  if (!isTimeZone(query.timezone)) throw invalid('timezone', `Unknown timezone: ${query.timezone}`);
  if (query.start.getTime() > query.end.getTime()) throw invalid('end_timestamp', 'end_timestamp must not be before start_timestamp');
  for (const key of Object.keys(query.metadata ?? {})) if (/["\\]/.test(key)) throw invalid(`metadata[${key}]`, 'Metadata keys cannot contain quotes or backslashes');
  const buckets = bucketsBetween(query.start, query.end, query.interval, query.timezone, MAX_BUCKETS);
  if (!buckets) throw invalid('interval', `More than ${MAX_BUCKETS} buckets: pick a longer interval or a shorter range`);
  if (buckets.length === 0) return { quantities: [], total: 0 };

  const same = query.customerIds?.length || query.externalCustomerIds?.length ? await sameCustomers(db, meter.organizationId, query.customerIds ?? [], query.externalCustomerIds ?? []) : undefined;
  const condition = await eventsCondition(db, meter, query, same);
  // Hourly rollups answer count, sum, avg, min and max once whole; metadata filters and unique read the events.
  const rollable = options.source !== 'events' && isPartialMeter(meter) && !Object.keys(query.metadata ?? {}).length;
  if (rollable && (await readyMeters(db, [meter.id])).has(meter.id)) {
    const keys = same ? [...same.ids, ...same.external.map(unknownCustomerKey)] : undefined;
    const partials = await rollupPartials(db, meter, buckets, { keys, perCustomer: Boolean(query.customerAggregationFunction) }, condition, customerKeySql('e'));
    const { perBucket, total } = quantitiesFromPartials(meter, buckets.length, partials, query.customerAggregationFunction);
    return { quantities: buckets.map((bucket, i) => ({ timestamp: bucket.start, quantity: perBucket[i] ?? 0 })), total };
  }
  if (options.source === 'rollups') throw new Error(`The rollups of meter ${meter.id} cannot answer this query`);
  const rows = await bucketQuery(db, meter, query, condition, buckets);
  const quantities = buckets.map((bucket, i) => ({ timestamp: bucket.start, quantity: rows.get(i) ?? 0 }));

  let total: number;
  const func = meter.aggregation.func;
  if (!query.customerAggregationFunction && (func === 'count' || func === 'sum')) total = quantities.reduce((sum, bucket) => sum + bucket.quantity, 0);
  else {
    // max, min, avg and unique over the whole range are not a function of the buckets' figures: ask once more.
    const whole = await bucketQuery(db, meter, query, condition, [{ start: query.start, from: query.start.getTime(), to: query.end.getTime() + 1 }]);
    total = whole.get(0) ?? 0;
  }
  return { quantities, total };
}

/**
 * One customer's consumption of a meter over events ingested from `since` (its last reset) and timestamped in
 * [from, to): the aggregation and how many events it covered.
 */
export async function customerUsage(
  db: Executor,
  meter: Meter,
  customer: { id: string; externalId: string | null },
  window: { ingestedFrom?: number; from?: number; to?: number },
): Promise<{ quantity: number; events: number }> {
  const dialect = dialectOf(db);
  const filter = compileFilter(dialect, meter.filter, 'e');
  const aggregation = compileAggregation(dialect, meter.aggregation, 'e');
  const parts = [`e.organization_id = ?`, `e.source = 'user'`, filter.sql];
  const bindings: Knex.RawBinding[] = [meter.organizationId, ...filter.bindings];
  if (customer.externalId) {
    parts.push('(e.customer_id = ? or e.external_customer_id = ?)');
    bindings.push(customer.id, customer.externalId);
  } else {
    parts.push('e.customer_id = ?');
    bindings.push(customer.id);
  }
  if (window.ingestedFrom !== undefined) {
    parts.push('e.ingested_ms >= ?');
    bindings.push(window.ingestedFrom);
  }
  if (window.from !== undefined) {
    parts.push('e.timestamp_ms >= ?');
    bindings.push(window.from);
  }
  if (window.to !== undefined) {
    parts.push('e.timestamp_ms < ?');
    bindings.push(window.to);
  }
  const result = await db.raw(`select ${aggregation.sql} as q, count(e.timestamp_ms) as n from events e where ${parts.join(' and ')}`, [...aggregation.bindings, ...bindings] as Knex.RawBinding[]);
  const rows: { q: unknown; n: unknown }[] = Array.isArray(result) ? result : result.rows;
  return { quantity: toQuantity(rows[0]?.q), events: Number(rows[0]?.n ?? 0) };
}
