import type { Knex } from 'knex';
import { fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../db/columns.js';
import { dialectOf, type Executor } from '../db/database.js';
import { escapeLike, whereMetadata } from '../db/sql.js';
import { offsetOf, type Page, type PageQuery } from '../billing/shared/pagination.js';
import type { SortCriterion } from '../billing/shared/query.js';
import type { Meter } from './schema.js';
import { read } from '../db/read.js';

const TABLE = 'meters';

function toMeter(row: Record<string, unknown>): Meter {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    name: String(row.name),
    filter: fromDbJson(row.filter),
    aggregation: fromDbJson(row.aggregation),
    unit: row.unit as Meter['unit'],
    customLabel: (row.custom_label as string | null) ?? null,
    customMultiplier: row.custom_multiplier === null || row.custom_multiplier === undefined ? null : Number(row.custom_multiplier),
    metadata: fromDbJson(row.metadata),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
    archivedAt: fromDbTimeOrNull(row.archived_at),
  };
}

const toRow = (meter: Meter) => ({
  name: meter.name,
  filter: toDbJson(meter.filter),
  aggregation: toDbJson(meter.aggregation),
  unit: meter.unit,
  custom_label: meter.customLabel,
  custom_multiplier: meter.customMultiplier,
  metadata: toDbJson(meter.metadata),
  modified_at: toDbTimeOrNull(meter.modifiedAt),
  archived_at: toDbTimeOrNull(meter.archivedAt),
});

export async function insertMeter(trx: Executor, meter: Meter): Promise<void> {
  await trx(TABLE).insert({ id: meter.id, organization_id: meter.organizationId, created_at: toDbTime(meter.createdAt), ...toRow(meter) });
}

export async function saveMeter(trx: Executor, meter: Meter): Promise<void> {
  await trx(TABLE).where({ id: meter.id }).update(toRow(meter));
}

/** A meter of one of the organizations; `forUpdate` locks it on PostgreSQL (an archive races a price creation). */
export async function findMeter(db: Executor, id: string, organizationIds: readonly string[], options: { forUpdate?: boolean } = {}): Promise<Meter | undefined> {
  const query = db(TABLE).where({ id }).whereIn('organization_id', organizationIds).first();
  if (options.forUpdate && dialectOf(db) === 'postgres') query.forUpdate();
  const row = await query;
  return row ? toMeter(row) : undefined;
}

export async function findMetersByIds(db: Executor, ids: readonly string[]): Promise<Meter[]> {
  if (ids.length === 0) return [];
  return (await read<Record<string, unknown>[]>(db(TABLE).whereIn('id', [...new Set(ids)]))).map(toMeter);
}

/** Every meter of an organization, archived ones too (ingestion keeps their figures). */
export async function organizationMeters(db: Executor, organizationId: string): Promise<Meter[]> {
  return (await db(TABLE).where({ organization_id: organizationId }).orderBy([{ column: 'created_at' }, { column: 'id' }])).map(toMeter);
}

/**
 * PostgreSQL: organizationMeters and which of them have whole rollups (readyMeters) in one statement, for an ingest
 * that holds the organization's metering lock already (its snapshot is taken after the lock).
 */
export async function organizationMetersWithReadiness(db: Executor, organizationId: string): Promise<{ meters: Meter[]; ready: Set<string> }> {
  const { rows } = (await db.raw(
    `select m.*, exists (select 1 from meter_rollup_states s where s.meter_id = m.id and s.status = 'ready') as rollups_ready from ${TABLE} m where m.organization_id = ? order by m.created_at, m.id`,
    [organizationId],
  )) as { rows: Record<string, unknown>[] };
  return { meters: rows.map(toMeter), ready: new Set(rows.filter((row) => row.rollups_ready === true).map((row) => String(row.id))) };
}

/** The live (not archived) meters of an organization, oldest first. */
export async function activeMeters(db: Executor, organizationId: string): Promise<Meter[]> {
  return (await read<Record<string, unknown>[]>(db(TABLE).where({ organization_id: organizationId }).whereNull('archived_at').orderBy([{ column: 'created_at' }, { column: 'id' }]))).map(toMeter);
}

const SORT_COLUMNS: Record<string, string> = { created_at: 'created_at', name: 'name' };

export async function listMeters(
  db: Executor,
  filter: { organizationIds: readonly string[]; query?: string; isArchived?: boolean; metadata?: Record<string, string[]> },
  sorting: readonly SortCriterion[],
  page: PageQuery,
): Promise<Page<Meter>> {
  const scoped = () => {
    const query = db(TABLE).whereIn('organization_id', filter.organizationIds);
    if (filter.query) query.whereRaw("lower(name) like ? escape '\\'", [`%${escapeLike(filter.query.toLowerCase())}%`]);
    if (filter.isArchived === true) query.whereNotNull('archived_at');
    if (filter.isArchived === false) query.whereNull('archived_at');
    if (filter.metadata && Object.keys(filter.metadata).length) whereMetadata(query as Knex.QueryBuilder, 'metadata', dialectOf(db) === 'postgres', filter.metadata);
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped();
  for (const { column, order } of sorting) if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
  const rows = await query.orderBy('id').limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toMeter), totalCount: Number(count) };
}

/** Whether a live price bills this meter (such a meter cannot be archived). */
export async function isMeterPriced(db: Executor, meterId: string): Promise<boolean> {
  const row = await db('product_prices').where({ meter_id: meterId, is_archived: false }).first('id');
  return row !== undefined;
}

/** Whether an order has billed this meter's usage (a line from one of its metered prices): Polar's last_billed_event. */
export async function hasMeterBilled(db: Executor, meterId: string): Promise<boolean> {
  const row = await db('order_items').join('product_prices', 'product_prices.id', 'order_items.product_price_id').where('product_prices.meter_id', meterId).first('order_items.id');
  return row !== undefined;
}
