import type { Knex } from 'knex';
import { fromDbInt } from '../db/columns.js';
import { dialectOf, type Executor } from '../db/database.js';
import { ROWS_PER_INSERT } from '../db/sql.js';
import { compileFilter } from './compile.js';
import { read } from '../db/read.js';
import { addPartialRows, partialColumns, partialRowsUpsertPg, toPartial, type Partial, type Statement } from './partials.js';
import type { Meter } from './schema.js';

/**
 * A customer's consumption of each meter, kept as partials (core/metering/partials.ts) in customer_meter_usage:
 * every ingest adds its events' partial in its own transaction, so a read never aggregates the customer's events
 * again. A row without a baseline (`pending`) is rebuilt from the events by the customer refresh job.
 */
const TABLE = 'customer_meter_usage';

export interface Usage {
  partial: Partial;
  sinceMs: number;
  pending: boolean;
}

const toUsage = (row: Record<string, unknown>): Usage => ({ partial: toPartial(row), sinceMs: fromDbInt(row.since_ms), pending: Number(row.pending) !== 0 });

/**
 * Adds an ingested batch's partials, one per meter and customer. A row created here has no baseline yet (it is
 * pending) unless its customer is among `whole`: customers none of whose events were stored before the batch.
 */
export async function addUsage(trx: Executor, organizationId: string, deltas: ReadonlyMap<string, ReadonlyMap<string, Partial>>, whole: ReadonlySet<string> = new Set()): Promise<void> {
  await addPartialRows(trx, TABLE, USAGE_KEY, usageRows(organizationId, deltas, whole));
}

const USAGE_KEY = ['meter_id', 'customer_id'];

/** PostgreSQL: addUsage as one statement, for a step of the ingest's WITH (partialRowsUpsertPg); undefined when no rows. */
export function usageUpsertPg(organizationId: string, deltas: ReadonlyMap<string, ReadonlyMap<string, Partial>>, whole: ReadonlySet<string>, where = ''): Statement | undefined {
  const rows = usageRows(organizationId, deltas, whole);
  return rows.length ? partialRowsUpsertPg(TABLE, USAGE_KEY, rows, where) : undefined;
}

function usageRows(organizationId: string, deltas: ReadonlyMap<string, ReadonlyMap<string, Partial>>, whole: ReadonlySet<string>): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  // In a fixed order, meters as given (the organization's, oldest first, as a refresh takes them) and customers
  // sorted: two transactions locking the same rows in different orders would deadlock on PostgreSQL.
  for (const meterId of deltas.keys()) {
    for (const [customerId, p] of [...deltas.get(meterId)!].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
      rows.push({ meter_id: meterId, customer_id: customerId, organization_id: organizationId, since_ms: 0, events: p.events, numbers: p.numbers, total: p.total, smallest: p.smallest, largest: p.largest, pending: whole.has(customerId) ? 0 : 1 });
    }
  }
  return rows;
}

export async function findUsage(db: Executor, meterId: string, customerId: string): Promise<Usage | undefined> {
  const row = await read<Record<string, unknown> | undefined>(db(TABLE).where({ meter_id: meterId, customer_id: customerId }).first());
  return row ? toUsage(row) : undefined;
}

/** Several customers' usage rows of several meters, keyed `meter id/customer id` (a refresh run's read). */
export async function usageOfCustomers(db: Executor, meterIds: readonly string[], customerIds: readonly string[]): Promise<Map<string, Usage>> {
  if (meterIds.length === 0 || customerIds.length === 0) return new Map();
  const rows = await read<Record<string, unknown>[]>(db(TABLE).whereIn('meter_id', meterIds).whereIn('customer_id', customerIds));
  return new Map(rows.map((row) => [`${row.meter_id}/${row.customer_id}`, toUsage(row)]));
}

/** The partial of a customer's events of a meter ingested from `sinceMs`: the events sent with its id or its external id. */
export async function customerPartial(db: Executor, meter: Meter, customer: { id: string; externalId: string | null }, sinceMs: number): Promise<Partial> {
  const dialect = dialectOf(db);
  const columns = partialColumns(dialect, meter, 'e');
  const filter = compileFilter(dialect, meter.filter, 'e');
  const who = customer.externalId ? '(e.customer_id = ? or e.external_customer_id = ?)' : 'e.customer_id = ?';
  const result = await db.raw(
    `select ${columns.sql} from events e where e.organization_id = ? and e.source = 'user' and ${filter.sql} and ${who} and e.ingested_ms >= ?`,
    [...columns.bindings, meter.organizationId, ...filter.bindings, customer.id, ...(customer.externalId ? [customer.externalId] : []), sinceMs] as Knex.RawBinding[],
  );
  const rows: Record<string, unknown>[] = Array.isArray(result) ? result : result.rows;
  return toPartial(rows[0] ?? {});
}

/**
 * Gives a customer's usage row of a meter its baseline: all its events ingested since `sinceMs`. The row is locked
 * first (created pending if missing), so an ingest running meanwhile either committed before the events are read
 * (and is counted in them) or adds its partial after this commits (PostgreSQL waits on the row lock).
 */
export async function rebuildUsage(trx: Executor, meter: Meter, customer: { id: string; externalId: string | null }, sinceMs: number): Promise<Usage> {
  await trx(TABLE)
    .insert({ meter_id: meter.id, customer_id: customer.id, organization_id: meter.organizationId, since_ms: sinceMs, events: 0, numbers: 0, total: 0, smallest: null, largest: null, pending: 1 })
    .onConflict(['meter_id', 'customer_id'])
    .ignore();
  const lock = trx(TABLE).where({ meter_id: meter.id, customer_id: customer.id });
  if (dialectOf(trx) === 'postgres') lock.forUpdate();
  await lock.first('pending');
  const partial = await customerPartial(trx, meter, customer, sinceMs);
  await trx(TABLE)
    .where({ meter_id: meter.id, customer_id: customer.id })
    .update({ since_ms: sinceMs, events: partial.events, numbers: partial.numbers, total: partial.total, smallest: partial.smallest, largest: partial.largest, pending: 0 });
  return { partial, sinceMs, pending: false };
}

/** Marks usage rows as lacking a baseline (a meter's filter changed, a customer got an external id): reads aggregate the events until rebuilt. */
export async function invalidateUsage(trx: Executor, where: { meterId?: string; customerId?: string }): Promise<string[]> {
  const query = trx(TABLE);
  if (where.meterId) query.where('meter_id', where.meterId);
  if (where.customerId) query.where('customer_id', where.customerId);
  const customers = (await query.clone().distinct('customer_id')).map((row) => String(row.customer_id));
  await query.update({ pending: 1 });
  return customers;
}
