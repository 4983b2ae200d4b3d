import type { Knex } from 'knex';
import { fromDbInt, fromDbJson, newId, newTimeOrderedId, toDbTime } from '../db/columns.js';
import { dialectOf, type Executor } from '../db/database.js';
import { ROWS_PER_INSERT, runEachRowPrepared, whereMetadata } from '../db/sql.js';
import { offsetOf, type Page, type PageQuery } from '../billing/shared/pagination.js';
import type { SortCriterion } from '../billing/shared/query.js';
import { wakeJobRunnerOnCommit } from '../jobs/jobs.js';
import { compileFilter } from './compile.js';
import type { EventMetadata, Filter, Meter, StoredEvent } from './schema.js';
import { groupedPartials, partialsQuery, type GroupedPartial, type Statement } from './partials.js';

const TABLE = 'events';
const COLUMNS = ['id', 'organization_id', 'name', 'source', 'timestamp_ms', 'ingested_ms', 'customer_id', 'external_customer_id', 'external_id', 'parent_id', 'metadata'] as const;
/** Rows per INSERT statement. */
const ROWS_PER_STATEMENT = 5000;
/** PostgreSQL's INSERT of events, one array per column (the batch is bound as COLUMNS.length parameters). */
const PG_INSERT =
  `insert into ${TABLE} (${COLUMNS.join(', ')}) select * from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::jsonb[]) ` +
  'on conflict do nothing';

export function toStoredEvent(row: Record<string, unknown>): StoredEvent {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    name: String(row.name),
    source: row.source === 'system' ? 'system' : 'user',
    timestamp: new Date(fromDbInt(row.timestamp_ms)),
    ingestedAt: new Date(fromDbInt(row.ingested_ms)),
    customerId: (row.customer_id as string | null) ?? null,
    externalCustomerId: (row.external_customer_id as string | null) ?? null,
    externalId: (row.external_id as string | null) ?? null,
    parentId: (row.parent_id as string | null) ?? null,
    metadata: fromDbJson<EventMetadata>(row.metadata),
  };
}

const rowValues = (event: StoredEvent) => [
  event.id,
  event.organizationId,
  event.name,
  event.source,
  event.timestamp.getTime(),
  event.ingestedAt.getTime(),
  event.customerId,
  event.externalCustomerId,
  event.externalId,
  event.parentId,
  JSON.stringify(event.metadata),
];

/**
 * Inserts events, skipping those whose (organization, external_id) is already taken (by a stored event or an
 * earlier one of the same batch); returns the ids actually inserted. The whole batch travels as ONE parameter —
 * a JSON array read with json_each on SQLite, one array per column unnested on PostgreSQL — so the statement is
 * the same short text whatever the batch size: no per-row placeholders for knex to rewrite or the database to
 * parse (that rewriting cost more than the insert itself at 1,000 rows a batch).
 */
export async function insertEvents(trx: Executor, events: readonly StoredEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const inserted: string[] = [];
  const pg = dialectOf(trx) === 'postgres';
  if (!pg) {
    const prepared = await insertPrepared(trx, events);
    if (prepared) return prepared;
  }
  for (let start = 0; start < events.length; start += ROWS_PER_STATEMENT) {
    const chunk = events.slice(start, start + ROWS_PER_STATEMENT).map(rowValues);
    const result = pg
      ? await trx.raw(
          `${PG_INSERT} returning id`,
          COLUMNS.map((_, column) => chunk.map((row) => row[column])) as unknown as Knex.RawBinding[],
        )
      : await trx.raw(
          `insert into ${TABLE} (${COLUMNS.join(', ')}) select ${COLUMNS.map((_, column) => `value ->> ${column}`).join(', ')} from json_each(?) where true ` +
            'on conflict do nothing returning id',
          [JSON.stringify(chunk)],
        );
    const rows: { id: string }[] = Array.isArray(result) ? result : result.rows;
    for (const row of rows) inserted.push(row.id);
  }
  return inserted;
}

/**
 * PostgreSQL, for an ingest: insertEvents, and partialsOfEvents of the events it inserted (duplicates left out), in
 * one statement: the partials read the INSERT's RETURNING rows instead of reading the new events back by id, one
 * round trip to the database fewer for a transaction whose statements each wait for a turn of a busy daemon.
 */
export async function insertEventsWithPartials(trx: Executor, events: readonly StoredEvent[], meters: readonly Meter[]): Promise<{ inserted: string[]; partials: Map<string, GroupedPartial[]> }> {
  const partials = new Map<string, GroupedPartial[]>(meters.map((meter) => [meter.id, []]));
  if (meters.length === 0) return { inserted: await insertEvents(trx, events), partials };
  const query = partialsQuery('postgres', meters);
  const inserted: string[] = [];
  for (let start = 0; start < events.length; start += ROWS_PER_STATEMENT) {
    const chunk = events.slice(start, start + ROWS_PER_STATEMENT).map(rowValues);
    const { rows } = (await trx.raw(
      `with ins as (${PG_INSERT} returning *), x as materialized (${query.marked('ins e')}), g as (${query.grouped}) ` +
        `select (select coalesce(array_agg(id), '{}') from ins) as inserted, (select coalesce(json_agg(g), '[]') from g) as partials`,
      [...COLUMNS.map((_, column) => chunk.map((row) => row[column])), ...query.markBindings, ...query.whereBindings] as unknown as Knex.RawBinding[],
    )) as { rows: { inserted: string[]; partials: Record<string, unknown>[] }[] };
    inserted.push(...rows[0]!.inserted);
    // Groups of several chunks are merged where they are added up (by customer, and by key and hour).
    for (const [meterId, groups] of groupedPartials(meters, rows[0]!.partials)) partials.get(meterId)!.push(...groups);
  }
  return { inserted, partials };
}

/** better-sqlite3 in a transaction: the rows through one prepared INSERT (core/db/sql.ts, runEachRowPrepared). */
async function insertPrepared(trx: Executor, events: readonly StoredEvent[]): Promise<string[] | undefined> {
  const sql = `insert into ${TABLE} (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')}) on conflict do nothing`;
  const changes = await runEachRowPrepared(trx, sql, events.map(rowValues));
  return changes && events.filter((_, i) => changes[i]! > 0).map((event) => event.id);
}

/** Ids of events of the organization among `ids` or with one of the `externalIds` (a parent may be named either way). */
export async function findEventKeys(db: Executor, organizationId: string, keys: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (keys.length === 0) return found;
  const rows = await db(TABLE)
    .where({ organization_id: organizationId })
    .andWhere((q) => q.whereIn('id', keys).orWhereIn('external_id', keys))
    .select('id', 'external_id');
  for (const row of rows) {
    found.set(row.id, row.id);
    if (row.external_id) found.set(row.external_id, row.id);
  }
  return found;
}

export async function findEvent(db: Executor, id: string, organizationIds: readonly string[]): Promise<StoredEvent | undefined> {
  const row = await db(TABLE).where({ id }).whereIn('organization_id', organizationIds).first();
  return row ? toStoredEvent(row) : undefined;
}

export interface EventFilter {
  organizationIds: readonly string[];
  customerIds?: readonly string[];
  externalCustomerIds?: readonly string[];
  names?: readonly string[];
  sources?: readonly string[];
  start?: Date;
  end?: Date;
  /** Only the events this meter counts (its filter), user events alone. */
  meterFilter?: Filter;
  parentId?: string;
  /** Only top-level events (depth 0), when no parent is given. */
  topLevel?: boolean;
  query?: string;
  metadata?: Record<string, string[]>;
}

/** Narrows an events query (alias `e`) to what a filter keeps: the list, the names and the event types share it. */
export function applyFilter(db: Executor, query: Knex.QueryBuilder, filter: EventFilter) {
  query.whereIn('e.organization_id', filter.organizationIds);
  if (filter.customerIds || filter.externalCustomerIds) {
    const ids = filter.customerIds ?? [];
    const external = filter.externalCustomerIds ?? [];
    query.andWhere((q) => {
      q.whereIn('e.customer_id', ids).orWhereIn('e.external_customer_id', external);
      // One customer, however its events named it (Polar): a customer's events include those sent with its external
      // id, and an external id's events those sent with the id of the customer holding it.
      if (ids.length) q.orWhereIn('e.external_customer_id', db('customers').whereIn('id', ids).whereNotNull('external_id').select('external_id'));
      if (external.length) q.orWhereIn('e.customer_id', db('customers').whereIn('organization_id', filter.organizationIds).whereIn('external_id', external).select('id'));
    });
  }
  if (filter.names) query.whereIn('e.name', filter.names);
  if (filter.sources) query.whereIn('e.source', filter.sources);
  if (filter.start) query.where('e.timestamp_ms', '>=', filter.start.getTime());
  if (filter.end) query.where('e.timestamp_ms', '<=', filter.end.getTime());
  if (filter.parentId) query.where('e.parent_id', filter.parentId);
  else if (filter.topLevel) query.whereNull('e.parent_id');
  if (filter.query) query.whereRaw("lower(e.name) like ? escape '\\'", [`%${filter.query.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`]);
  if (filter.meterFilter) {
    const compiled = compileFilter(dialectOf(db), filter.meterFilter, 'e');
    query.where('e.source', 'user').whereRaw(compiled.sql, compiled.bindings as Knex.RawBinding[]);
  }
  if (filter.metadata && Object.keys(filter.metadata).length) whereMetadata(query, 'e.metadata', dialectOf(db) === 'postgres', filter.metadata);
}

export async function listEvents(db: Executor, filter: EventFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<StoredEvent>> {
  const scoped = () => {
    const query = db(`${TABLE} as e`);
    applyFilter(db, query, filter);
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped().select('e.*');
  for (const { column, order } of sorting) if (column === 'timestamp') query.orderBy('e.timestamp_ms', order);
  const rows = await query.orderBy('e.id').limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toStoredEvent), totalCount: Number(count) };
}

/** How many direct children each event has. */
export async function childCounts(db: Executor, ids: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (ids.length === 0) return counts;
  const rows = await db(TABLE).whereIn('parent_id', ids).groupBy('parent_id').select('parent_id', db.raw('count(*) as n'));
  for (const row of rows) counts.set(String(row.parent_id), Number(row.n));
  return counts;
}

export interface EventName {
  name: string;
  source: 'user' | 'system';
  occurrences: number;
  firstSeen: Date;
  lastSeen: Date;
}

const NAME_SORT: Record<string, string> = { name: 'name', occurrences: 'occurrences', first_seen: 'first_seen', last_seen: 'last_seen' };

/** The distinct event names, with how often and when they were seen. */
export async function listEventNames(db: Executor, filter: EventFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<EventName>> {
  const grouped = () => {
    const query = db(`${TABLE} as e`);
    applyFilter(db, query, filter);
    return query
      .groupBy('e.name', 'e.source')
      .select('e.name as name', 'e.source as source', db.raw('count(*) as occurrences'), db.raw('min(e.timestamp_ms) as first_seen'), db.raw('max(e.timestamp_ms) as last_seen'));
  };
  const [{ count }] = await db.from(grouped().as('g')).count<{ count: number | string }[]>({ count: '*' });
  const query = db.from(grouped().as('g')).select('*');
  for (const { column, order } of sorting) if (NAME_SORT[column]) query.orderBy(NAME_SORT[column], order);
  const rows = await query.orderBy('name').orderBy('source').limit(page.limit).offset(offsetOf(page));
  return {
    items: rows.map((row) => ({
      name: String(row.name),
      source: row.source === 'system' ? 'system' : 'user',
      occurrences: fromDbInt(row.occurrences),
      firstSeen: new Date(fromDbInt(row.first_seen)),
      lastSeen: new Date(fromDbInt(row.last_seen)),
    })),
    totalCount: Number(count),
  };
}

/** A system event (meter.credited, meter.reset) for one customer. */
export async function insertSystemEvent(
  trx: Executor,
  event: { organizationId: string; customerId: string; externalCustomerId: string | null; name: string; metadata: EventMetadata; at: Date },
): Promise<StoredEvent> {
  const stored: StoredEvent = {
    id: newTimeOrderedId(),
    organizationId: event.organizationId,
    name: event.name,
    source: 'system',
    timestamp: event.at,
    ingestedAt: event.at,
    customerId: event.customerId,
    externalCustomerId: event.externalCustomerId,
    externalId: null,
    parentId: null,
    metadata: event.metadata,
  };
  await insertEvents(trx, [stored]);
  return stored;
}

/** A customer's system events of the given names (the lifecycle events that copy its personal data). */
export async function systemEventsOfCustomer(db: Executor, organizationId: string, customerId: string, names: readonly string[]): Promise<StoredEvent[]> {
  const rows = await db(TABLE).where({ organization_id: organizationId, customer_id: customerId, source: 'system' }).whereIn('name', names);
  return rows.map(toStoredEvent);
}

/** Replaces an event's metadata. */
export async function saveEventMetadata(trx: Executor, id: string, metadata: Record<string, unknown>): Promise<void> {
  await trx(TABLE).where({ id }).update({ metadata: JSON.stringify(metadata) });
}

export const CUSTOMER_REFRESH_JOB = 'metering.refresh_customer';

/**
 * Marks customers whose meters need recomputing after an ingest or a credit: one job per customer (subject: the
 * customer id, or `<organization>:<external id>` when no customer has that external id yet), due at `runAt`. A job
 * already pending keeps the earlier of its time and this one, so steady ingestion cannot keep pushing a refresh
 * back; a job already running has its claim released, so it runs once more after this commit (it may have read
 * the customer's meters before this change). The runner of this pool is woken when the job is due.
 */
export async function markCustomersDirty(trx: Executor, organizationId: string, subjects: readonly string[], runAt: Date): Promise<void> {
  if (subjects.length === 0) return;
  if (dialectOf(trx) === 'postgres') {
    const upsert = dirtyCustomersUpsertPg(organizationId, subjects, runAt)!;
    await trx.raw(upsert.sql, upsert.bindings);
    wakeJobRunnerOnCommit(trx, runAt.getTime());
    return;
  }
  const created = toDbTime(new Date());
  const rows = sortedSubjects(subjects).map((subject) => ({
    id: newId(),
    organization_id: organizationId,
    kind: CUSTOMER_REFRESH_JOB,
    subject_id: subject,
    run_at_ms: runAt.getTime(),
    attempts: 0,
    locked_by: null,
    locked_until_ms: null,
    last_error: null,
    created_at: created,
  }));
  // SQLite takes 500 rows a multi-row INSERT: a batch may touch more customers.
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    await trx('jobs')
      .insert(rows.slice(start, start + ROWS_PER_INSERT))
      .onConflict(['kind', 'subject_id'])
      .merge({ run_at_ms: trx.raw(KEEP_EARLIER_RUN_AT), locked_by: null, locked_until_ms: null })
      .whereRaw(ONLY_IF_IT_CHANGES);
  }
  wakeJobRunnerOnCommit(trx, runAt.getTime());
}

const KEEP_EARLIER_RUN_AT = 'case when jobs.run_at_ms < excluded.run_at_ms and jobs.locked_by is null then jobs.run_at_ms else excluded.run_at_ms end';
/**
 * The refresh job is rewritten only when that changes it: it is claimed (the reschedule releases the claim, so the
 * customer is refreshed again after this commit) or due later. Under ingest a customer's job is almost always
 * pending and due already, and rewriting it identically made a new row version and index entries for every customer
 * of every batch (on PostgreSQL the conflicting row is still locked, which keeps concurrent ingests in order).
 */
const ONLY_IF_IT_CHANGES = 'jobs.locked_by is not null or jobs.run_at_ms > excluded.run_at_ms';

// Sorted: two ingests locking the same job rows in different orders would deadlock on PostgreSQL.
const sortedSubjects = (subjects: readonly string[]) => [...subjects].sort();

/**
 * PostgreSQL: markCustomersDirty's upsert as one statement over arrays of ids and subjects, for a step of the
 * ingest's WITH (`where` goes on its SELECT); the caller wakes the runner (wakeJobRunnerOnCommit). Undefined when
 * no subjects.
 */
export function dirtyCustomersUpsertPg(organizationId: string, subjects: readonly string[], runAt: Date, where = ''): Statement | undefined {
  if (subjects.length === 0) return undefined;
  const sorted = sortedSubjects(subjects);
  return {
    sql:
      'insert into jobs (id, organization_id, kind, subject_id, run_at_ms, attempts, locked_by, locked_until_ms, last_error, created_at) ' +
      `select s.id, ?, ?, s.subject_id, ?::bigint, 0, null, null, null, ?::timestamptz from unnest(?::text[], ?::text[]) as s(id, subject_id) ${where} ` +
      `on conflict (kind, subject_id) do update set run_at_ms = ${KEEP_EARLIER_RUN_AT}, locked_by = null, locked_until_ms = null where ${ONLY_IF_IT_CHANGES}`,
    bindings: [organizationId, CUSTOMER_REFRESH_JOB, runAt.getTime(), toDbTime(new Date()), sorted.map(() => newId()), sorted] as unknown as Knex.RawBinding[],
  };
}
