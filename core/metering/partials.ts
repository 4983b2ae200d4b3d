import type { Knex } from 'knex';
import { dialectOf, type Dialect, type Executor } from '../db/database.js';
import { fromDbInt } from '../db/columns.js';
import { ROWS_PER_INSERT, runEachRowPrepared } from '../db/sql.js';
import { compileFilter, compileNumericValue, type Sql } from './compile.js';
import type { Aggregation, Meter } from './schema.js';

/**
 * A mergeable partial aggregate of a meter's events: how many events, how many carried a numeric value of the
 * aggregated property, their sum, smallest and largest. Two partials of disjoint events merge into the partial of
 * their union, so count, sum, avg, min and max are kept up to date by adding what each ingest brings.
 * `unique` is not: a distinct count of a union is not a function of the parts' counts.
 */
export interface Partial {
  events: number;
  numbers: number;
  total: number;
  smallest: number | null;
  largest: number | null;
}

export const EMPTY_PARTIAL: Partial = { events: 0, numbers: 0, total: 0, smallest: null, largest: null };

export const HOUR_MS = 3_600_000;

/** Whether a meter's figures can be kept as partials (every aggregation but unique). */
export const isPartialMeter = (meter: { aggregation: Aggregation }): boolean => meter.aggregation.func !== 'unique';

const pick = (a: number | null, b: number | null, better: (x: number, y: number) => boolean) => (a === null ? b : b === null ? a : better(a, b) ? a : b);

export function mergePartials(a: Partial, b: Partial): Partial {
  return {
    events: a.events + b.events,
    numbers: a.numbers + b.numbers,
    total: a.total + b.total,
    smallest: pick(a.smallest, b.smallest, (x, y) => x <= y),
    largest: pick(a.largest, b.largest, (x, y) => x >= y),
  };
}

/** The meter's figure for a partial, as the raw aggregation answers it (no numeric value: 0). */
export function quantityOf(aggregation: Aggregation, partial: Partial): number {
  switch (aggregation.func) {
    case 'count':
      return partial.events;
    case 'sum':
      return partial.total;
    case 'avg':
      return partial.numbers ? partial.total / partial.numbers : 0;
    case 'max':
      return partial.largest ?? 0;
    case 'min':
      return partial.smallest ?? 0;
    default:
      throw new Error(`${aggregation.func} is not kept as partials`);
  }
}

const toNumberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/** Reads a partial from a row with columns events, numbers, total, smallest, largest (pg answers bigints as text). */
export function toPartial(row: Record<string, unknown>): Partial {
  return {
    events: fromDbInt(row.events ?? 0),
    numbers: fromDbInt(row.numbers ?? 0),
    total: Number(row.total ?? 0),
    smallest: toNumberOrNull(row.smallest),
    largest: toNumberOrNull(row.largest),
  };
}

/** The SQL aggregates of a partial over the events aliased `alias`, named events, numbers, total, smallest, largest. */
export function partialColumns(dialect: Dialect, meter: Meter, alias = 'e'): Sql {
  const events = `count(${alias}.timestamp_ms) as events`;
  if (meter.aggregation.func === 'count' || meter.aggregation.func === 'unique') {
    return { sql: `${events}, 0 as numbers, 0 as total, null as smallest, null as largest`, bindings: [] };
  }
  const value = compileNumericValue(dialect, meter.aggregation.property, alias);
  return {
    sql: `${events}, count(${value.sql}) as numbers, coalesce(sum(${value.sql}), 0) as total, min(${value.sql}) as smallest, max(${value.sql}) as largest`,
    bindings: [...value.bindings, ...value.bindings, ...value.bindings, ...value.bindings],
  };
}

/** The start of the UTC hour of an epoch-ms expression (floor, also before 1970), the same on both dialects. */
export const hourSql = (column: string) => `(${column} - ((${column} % ${HOUR_MS}) + ${HOUR_MS}) % ${HOUR_MS})`;
export const hourOf = (ms: number) => ms - (((ms % HOUR_MS) + HOUR_MS) % HOUR_MS);

export interface GroupedPartial extends Partial {
  customerId: string | null;
  externalCustomerId: string | null;
  hourMs: number;
}

/**
 * The partials of meters over some events (named by id, e.g. an ingested batch; each meter's filter applied), by
 * meter, by the customer columns the events were ingested with and by UTC hour: one pass over the events for all
 * the meters (an ingest keeps every meter of the organization), each event's filter and value worked out once.
 */
export async function partialsOfEvents(db: Executor, meters: readonly Meter[], ids: readonly string[]): Promise<Map<string, GroupedPartial[]>> {
  if (ids.length === 0 || meters.length === 0) return new Map(meters.map((meter) => [meter.id, []]));
  const dialect = dialectOf(db);
  // The events by primary key, one lookup per id. SQLite's planner otherwise scans the organization's events by
  // an (organization_id, …) index against a bloom filter of the ids: a cost that grew with every event stored
  // (11 ms a 100-event batch, 80 ms at worst, under the ingest benchmark); CROSS JOIN keeps the ids as the outer loop.
  // PostgreSQL did the same with `e.id = any(…)`: it read the organization's events by the (organization_id, name, …)
  // index and filtered them by the ids (EXPLAIN ANALYZE at 200,000 events: 126 ms a 1,000-event batch, 180,000 rows
  // removed by the filter); a LATERAL subquery per id (OFFSET 0 keeps it from being flattened) reads each by primary
  // key (2.6-4.3 ms).
  const from =
    dialect === 'postgres'
      ? 'unnest(?::text[]) as ids(id) cross join lateral (select * from events e where e.id = ids.id offset 0) e'
      : 'json_each(?) ids cross join events e on e.id = ids.value';
  const query = partialsQuery(dialect, meters);
  const result = await db.raw(`with x as materialized (${query.marked(from)}) ${query.grouped}`, [...query.markBindings, dialect === 'postgres' ? ids : JSON.stringify(ids), ...query.whereBindings] as Knex.RawBinding[]);
  return groupedPartials(meters, Array.isArray(result) ? result : result.rows);
}

/**
 * The SQL of partialsOfEvents over the events a FROM clause names `e`: `marked(from)` selects, per event, its
 * customer columns, its hour and per meter whether it is in the meter (m<k>) and its numeric value if so (v<k>), to
 * be a materialized step `x` (the aggregates read those columns instead of extracting the metadata once per
 * aggregate); `grouped` aggregates `x` by customer columns and hour. The bindings: `markBindings` before the FROM
 * clause's own, `whereBindings` after them.
 */
export function partialsQuery(dialect: Dialect, meters: readonly Meter[]): { marked(from: string): string; grouped: string; markBindings: Knex.RawBinding[]; whereBindings: Knex.RawBinding[] } {
  const marks: string[] = [];
  const markBindings: Knex.RawBinding[] = [];
  const aggregates: string[] = [];
  const filters: string[] = [];
  const filterBindings: Knex.RawBinding[] = [];
  meters.forEach((meter, k) => {
    const filter = compileFilter(dialect, meter.filter, 'e');
    marks.push(`case when ${filter.sql} then 1 end as m${k}`);
    markBindings.push(...filter.bindings);
    aggregates.push(`count(m${k}) as events${k}`);
    if (meter.aggregation.func === 'count' || meter.aggregation.func === 'unique') {
      aggregates.push(`0 as numbers${k}, 0 as total${k}, null as smallest${k}, null as largest${k}`);
    } else {
      const value = compileNumericValue(dialect, meter.aggregation.property, 'e');
      marks.push(`case when ${filter.sql} then ${value.sql} end as v${k}`);
      markBindings.push(...filter.bindings, ...value.bindings);
      aggregates.push(`count(v${k}) as numbers${k}, coalesce(sum(v${k}), 0) as total${k}, min(v${k}) as smallest${k}, max(v${k}) as largest${k}`);
    }
    filters.push(`(${filter.sql})`);
    filterBindings.push(...filter.bindings);
  });
  return {
    marked: (from) =>
      `select e.customer_id as customer_id, e.external_customer_id as external_customer_id, ${hourSql('e.timestamp_ms')} as hour_ms, ${marks.join(', ')} ` +
      `from ${from} where e.organization_id = ? and e.source = 'user' and (${filters.join(' or ')})`,
    grouped: `select customer_id, external_customer_id, hour_ms, ${aggregates.join(', ')} from x group by customer_id, external_customer_id, hour_ms`,
    markBindings,
    whereBindings: [meters[0]!.organizationId, ...filterBindings],
  };
}

/** partialsQuery's grouped rows (from the database, or as JSON) as partials by meter; empty ones left out. */
export function groupedPartials(meters: readonly Meter[], rows: readonly Record<string, unknown>[]): Map<string, GroupedPartial[]> {
  const byMeter = new Map<string, GroupedPartial[]>(meters.map((meter) => [meter.id, []]));
  for (const row of rows) {
    const customerId = (row.customer_id as string | null) ?? null;
    const externalCustomerId = (row.external_customer_id as string | null) ?? null;
    const hourMs = fromDbInt(row.hour_ms);
    meters.forEach((meter, k) => {
      const partial = toPartial({ events: row[`events${k}`], numbers: row[`numbers${k}`], total: row[`total${k}`], smallest: row[`smallest${k}`], largest: row[`largest${k}`] });
      if (partial.events > 0) byMeter.get(meter.id)!.push({ ...partial, customerId, externalCustomerId, hourMs });
    });
  }
  return byMeter;
}

/** The columns of the partial tables (customer_meter_usage, meter_rollups) as PostgreSQL types, for their arrays. */
const PG_TYPES: Record<string, string> = {
  meter_id: 'text',
  customer_id: 'text',
  customer_key: 'text',
  organization_id: 'text',
  since_ms: 'bigint',
  hour_ms: 'bigint',
  events: 'bigint',
  numbers: 'bigint',
  total: 'double precision',
  smallest: 'double precision',
  largest: 'double precision',
  pending: 'integer',
};

const mergeOf = (t: string) => ({
  events: `${t}.events + excluded.events`,
  numbers: `${t}.numbers + excluded.numbers`,
  total: `${t}.total + excluded.total`,
  smallest: `case when excluded.smallest is null then ${t}.smallest when ${t}.smallest is null or excluded.smallest < ${t}.smallest then excluded.smallest else ${t}.smallest end`,
  largest: `case when excluded.largest is null then ${t}.largest when ${t}.largest is null or excluded.largest > ${t}.largest then excluded.largest else ${t}.largest end`,
});

/** A statement's SQL with its bindings (which may be arrays, for PostgreSQL's unnest). */
export interface Statement {
  sql: string;
  bindings: Knex.RawBinding[];
}

/**
 * PostgreSQL: the upsert of addPartialRows as one statement whatever the number of rows, each column one array
 * parameter unnested (rows inserted, and so locked, in the order given). `where` (e.g. a condition on an earlier
 * step of a WITH) goes on its SELECT.
 */
export function partialRowsUpsertPg(table: string, conflict: string[], rows: readonly Record<string, unknown>[], where = ''): Statement {
  const columns = Object.keys(rows[0]!);
  return {
    sql:
      `insert into ${table} (${columns.join(', ')}) select * from unnest(${columns.map((column) => `?::${PG_TYPES[column]}[]`).join(', ')}) ${where} ` +
      `on conflict (${conflict.join(', ')}) do update set ${Object.entries(mergeOf(table)).map(([column, value]) => `${column} = ${value}`).join(', ')}`,
    bindings: columns.map((column) => rows.map((row) => row[column])) as unknown as Knex.RawBinding[],
  };
}

/**
 * Adds partials to the stored rows of `table` keyed by `conflict` (inserted when new): counts and totals summed, the
 * smallest and largest kept. On SQLite in a transaction, one prepared upsert run per row (runEachRowPrepared: a
 * multi-row INSERT there is a compound SELECT, whose parsing cost more than the upserts); on PostgreSQL one
 * statement over arrays (partialRowsUpsertPg); otherwise multi-row INSERTs of at most ROWS_PER_INSERT rows.
 */
export async function addPartialRows(trx: Executor, table: string, conflict: string[], rows: Record<string, unknown>[]): Promise<void> {
  if (rows.length === 0) return;
  if (dialectOf(trx) === 'postgres') {
    const upsert = partialRowsUpsertPg(table, conflict, rows);
    await trx.raw(upsert.sql, upsert.bindings);
    return;
  }
  const t = table;
  const merge = mergeOf(t);
  const columns = Object.keys(rows[0]!);
  const upsert =
    `insert into ${t} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')}) ` +
    `on conflict (${conflict.join(', ')}) do update set ${Object.entries(merge).map(([column, value]) => `${column} = ${value}`).join(', ')}`;
  if (await runEachRowPrepared(trx, upsert, rows.map((row) => columns.map((column) => row[column])))) return;
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    await trx(table)
      .insert(rows.slice(start, start + ROWS_PER_INSERT))
      .onConflict(conflict)
      .merge(Object.fromEntries(Object.entries(merge).map(([column, value]) => [column, trx.raw(value)])));
  }
}
