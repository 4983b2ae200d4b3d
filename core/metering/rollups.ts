import type { Knex } from 'knex';
import { newId, toDbTime } from '../db/columns.js';
import { dialectOf, type Executor } from '../db/database.js';
import { ROWS_PER_INSERT } from '../db/sql.js';
import { scheduleJob, wakeJobRunnerOnCommit, type JobHandlers } from '../jobs/jobs.js';
import { addPartialRows, partialRowsUpsertPg, partialsOfEvents, type GroupedPartial, type Partial, type Statement, mergePartials, isPartialMeter } from './partials.js';
import { findMetersByIds } from './meters-repository.js';
import type { Meter } from './schema.js';

/**
 * A meter's hourly rollups (migration 0041): per UTC hour, the partial aggregate of its events for everyone
 * (customer keys `#0`…`#7`) and per customer (a customer id, or `x:<external id>` for events of no known customer).
 * Ingestion adds each batch in its own transaction; a meter created after its events, or whose filter or
 * aggregation changed, is backfilled by a job that takes the organization's events in id order, one chunk a run.
 */
const TABLE = 'meter_rollups';
const STATES = 'meter_rollup_states';
export const ROLLUP_BACKFILL_JOB = 'metering.backfill_rollups';
/** Events a backfill run takes in: a run is one transaction, short enough not to hold SQLite (or ingestion) for long. */
const BACKFILL_CHUNK = 5000;

/**
 * Everyone's rows are spread over a few keys (`#0` … `#7`, one picked per ingest), so concurrent ingests of the same
 * hour do not all wait on one row; everyone's figure is the sum of them.
 */
export const EVERYONE_KEYS = ['#0', '#1', '#2', '#3', '#4', '#5', '#6', '#7'] as const;
const anyEveryoneKey = () => EVERYONE_KEYS[Math.floor(Math.random() * EVERYONE_KEYS.length)]!;
export const unknownCustomerKey = (externalId: string) => `x:${externalId}`;

/**
 * PostgreSQL: ingests hold the organization's metering lock shared, a backfill run (and a meter's creation or
 * change) exclusively. A backfill run so sees every ingest that took ids before it, and every ingest after it sees
 * the meter's new state; SQLite's single writer gives the same order by itself.
 */
export async function lockMetering(trx: Executor, organizationId: string, mode: 'shared' | 'exclusive'): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  await trx.raw(mode === 'shared' ? 'select pg_advisory_xact_lock_shared(hashtext(?))' : 'select pg_advisory_xact_lock(hashtext(?))', [`metering:${organizationId}`]);
}

/** The meters among `meterIds` whose rollups are whole. */
export async function readyMeters(db: Executor, meterIds: readonly string[]): Promise<Set<string>> {
  if (meterIds.length === 0) return new Set();
  return new Set((await db(STATES).whereIn('meter_id', meterIds).where({ status: 'ready' }).select('meter_id')).map((row) => String(row.meter_id)));
}

/** Adds partials to meters' rollups, by meter, customer key and hour. */
export async function addRollups(trx: Executor, rows: ReadonlyMap<string, ReadonlyMap<string, { key: string; hourMs: number; partial: Partial }>>): Promise<void> {
  await addPartialRows(trx, TABLE, ROLLUP_KEY, rollupValues(rows));
}

const ROLLUP_KEY = ['meter_id', 'customer_key', 'hour_ms'];

/** PostgreSQL: addRollups as one statement, for a step of the ingest's WITH (partialRowsUpsertPg); undefined when no rows. */
export function rollupsUpsertPg(rows: ReadonlyMap<string, ReadonlyMap<string, { key: string; hourMs: number; partial: Partial }>>, where = ''): Statement | undefined {
  const values = rollupValues(rows);
  return values.length ? partialRowsUpsertPg(TABLE, ROLLUP_KEY, values, where) : undefined;
}

function rollupValues(rows: ReadonlyMap<string, ReadonlyMap<string, { key: string; hourMs: number; partial: Partial }>>): Record<string, unknown>[] {
  const values: Record<string, unknown>[] = [];
  // In a fixed order, meters as given (the organization's, oldest first) and then by key and hour: two ingests
  // locking the same rows in different orders would deadlock on PostgreSQL.
  for (const meterId of rows.keys()) {
    const sorted = [...rows.get(meterId)!.values()].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : x.hourMs - y.hourMs));
    for (const { key, hourMs, partial } of sorted) {
      values.push({ meter_id: meterId, customer_key: key, hour_ms: hourMs, events: partial.events, numbers: partial.numbers, total: partial.total, smallest: partial.smallest, largest: partial.largest });
    }
  }
  return values;
}

/** Groups partials into rollup rows: each group under its customer's key and under everyone's. */
export function rollupRows(groups: readonly GroupedPartial[], keyOf: (group: GroupedPartial) => string): Map<string, { key: string; hourMs: number; partial: Partial }> {
  const rows = new Map<string, { key: string; hourMs: number; partial: Partial }>();
  const add = (key: string, hourMs: number, partial: Partial) => {
    const id = `${key}\u0000${hourMs}`;
    const current = rows.get(id);
    rows.set(id, { key, hourMs, partial: current ? mergePartials(current.partial, partial) : partial });
  };
  const everyone = anyEveryoneKey();
  for (const group of groups) {
    add(keyOf(group), group.hourMs, group);
    add(everyone, group.hourMs, group);
  }
  return rows;
}

/** The customers holding these external ids now, by external id. */
export async function customersByExternalId(db: Executor, organizationId: string, externalIds: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (let start = 0; start < externalIds.length; start += 500) {
    const rows = await db('customers').where({ organization_id: organizationId }).whereIn('external_id', externalIds.slice(start, start + 500)).whereNull('deleted_at').select('id', 'external_id');
    for (const row of rows) found.set(String(row.external_id), String(row.id));
  }
  return found;
}

/**
 * Has a meter's rollups built from its events: called in the transaction that creates the meter or changes its
 * filter or aggregation. Until the backfill is through, quantities are aggregated from the events.
 */
export async function startRollupBackfill(trx: Executor, meter: Meter): Promise<void> {
  await lockMetering(trx, meter.organizationId, 'exclusive');
  await trx(TABLE).where({ meter_id: meter.id }).delete();
  await trx(STATES).insert({ meter_id: meter.id, status: 'building', cursor: null }).onConflict('meter_id').merge({ status: 'building', cursor: null });
  // Due at once whatever the organization's clock says (a sandbox clock may stand still), and started at the commit:
  // left to the runner's next poll, a meter created just before an ingest burst had its backfill chasing the burst.
  await scheduleJob(trx, { organizationId: meter.organizationId, kind: ROLLUP_BACKFILL_JOB, subjectId: meter.id, runAt: new Date(0) });
  wakeJobRunnerOnCommit(trx, 0);
}

/** At start: every backfill left unfinished (a daemon killed mid-way, meters older than the rollups) is due again. */
export async function resumeRollupBackfills(db: Knex): Promise<number> {
  const building = await db(`${STATES} as s`).join('meters as m', 'm.id', 's.meter_id').where('s.status', 'building').select('m.id', 'm.organization_id');
  for (const row of building) {
    await db('jobs')
      .insert({ id: newId(), organization_id: row.organization_id, kind: ROLLUP_BACKFILL_JOB, subject_id: row.id, run_at_ms: 0, attempts: 0, locked_by: null, locked_until_ms: null, last_error: null, created_at: toDbTime(new Date()) })
      .onConflict(['kind', 'subject_id'])
      .ignore();
  }
  return building.length;
}

/** One backfill run: the next chunk of the organization's events after the cursor; the last one marks the rollups whole. */
async function backfillChunk(trx: Executor, meter: Meter): Promise<'done' | 'more'> {
  await lockMetering(trx, meter.organizationId, 'exclusive');
  const state = await trx(STATES).where({ meter_id: meter.id }).first();
  if (!state || state.status !== 'building') return 'done';
  const cursor = (state.cursor as string | null) ?? '';
  // The next chunk by the (organization, id) index (migration 0052); a full chunk may have more after it.
  const ids = (await trx('events').where('organization_id', meter.organizationId).where('id', '>', cursor).orderBy('id').limit(BACKFILL_CHUNK).select('id')).map((row) => String(row.id));
  const upper = ids.length === BACKFILL_CHUNK ? ids[ids.length - 1] : undefined;
  if (isPartialMeter(meter)) {
    const groups = (await partialsOfEvents(trx, [meter], ids)).get(meter.id)!;
    const byExternal = await customersByExternalId(trx, meter.organizationId, [...new Set(groups.flatMap((g) => (g.customerId === null && g.externalCustomerId !== null ? [g.externalCustomerId] : [])))]);
    await addRollups(trx, new Map([[meter.id, rollupRows(groups, (g) => g.customerId ?? byExternal.get(g.externalCustomerId!) ?? unknownCustomerKey(g.externalCustomerId!))]]));
  }
  if (upper) {
    await trx(STATES).where({ meter_id: meter.id }).update({ cursor: upper });
    return 'more';
  }
  await trx(STATES).where({ meter_id: meter.id }).update({ status: 'ready', cursor: null });
  return 'done';
}

export const rollupJobs: JobHandlers = {
  [ROLLUP_BACKFILL_JOB]: async ({ db }, job) => {
    const outcome = await db.transaction(async (trx) => {
      const [meter] = await findMetersByIds(trx, [job.subjectId]);
      if (!meter) return 'done';
      const result = await backfillChunk(trx, meter);
      // The next chunk in a run of its own: other work (and, on SQLite, the event loop) gets its turn between.
      if (result === 'more') await scheduleJob(trx, { organizationId: meter.organizationId, kind: ROLLUP_BACKFILL_JOB, subjectId: meter.id, runAt: new Date(0) });
      return result;
    });
    return void outcome;
  },
};
