import type { Knex } from 'knex';
import { fromDbBool, fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import { dialectOf } from '../../db/database.js';
import type { Metadata } from '../shared/metadata.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { Benefit, Visibility } from './schema.js';
import { escapeLike, whereMetadata } from '../../db/sql.js';
import { compiledRead } from '../../db/compiled-read.js';

type Executor = Knex | Knex.Transaction;
const TABLE = 'benefits';

/** A benefit from its row (also from a JSON row: another repository reading it with its own). */
export function toBenefit(row: Record<string, unknown>): Benefit {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    type: row.type,
    description: String(row.description),
    selectable: fromDbBool(row.selectable),
    deletable: fromDbBool(row.deletable),
    visibility: (row.visibility as Visibility | null) ?? null,
    properties: fromDbJson(row.properties),
    metadata: fromDbJson<Metadata>(row.metadata),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
    deletedAt: fromDbTimeOrNull(row.deleted_at),
  } as Benefit;
}

export async function insertBenefit(trx: Executor, benefit: Benefit): Promise<void> {
  await trx(TABLE).insert({
    id: benefit.id,
    organization_id: benefit.organizationId,
    type: benefit.type,
    description: benefit.description,
    selectable: benefit.selectable,
    deletable: benefit.deletable,
    visibility: benefit.visibility,
    properties: toDbJson(benefit.properties),
    metadata: toDbJson(benefit.metadata),
    created_at: toDbTime(benefit.createdAt),
    modified_at: toDbTimeOrNull(benefit.modifiedAt),
    deleted_at: null,
  });
}

/** A live (not deleted) benefit of one of the organizations. */
/** A live benefit; `forUpdate` locks its row on PostgreSQL until the transaction ends (changes apply one by one). */
export async function findBenefit(db: Executor, id: string, organizationIds: Iterable<string>, options: { forUpdate?: boolean } = {}): Promise<Benefit | undefined> {
  const query = db(TABLE).where({ id }).whereIn('organization_id', [...organizationIds]).whereNull('deleted_at');
  if (options.forUpdate && dialectOf(db as Knex) === 'postgres') query.forUpdate();
  const row = await query.first();
  return row ? toBenefit(row) : undefined;
}

/** A benefit whether or not it was deleted (a revoked grant's job still takes back what the benefit gave). */
export async function findBenefitEvenDeleted(db: Executor, id: string): Promise<Benefit | undefined> {
  const row = await db(TABLE).where({ id }).first();
  return row ? toBenefit(row) : undefined;
}

/** The live benefits of an organization among `ids` (products attach them). */
export async function findBenefits(db: Executor, organizationId: string, ids: readonly string[]): Promise<Benefit[]> {
  return (await benefitsAmong(db, organizationId, ids)).map(toBenefit);
}

const benefitsAmong = compiledRead<Record<string, unknown>[], [string, readonly string[]]>((db, organizationId, ids) =>
  db(TABLE).where({ organization_id: organizationId }).whereIn('id', ids).whereNull('deleted_at'),
);

export interface BenefitFilter {
  organizationIds: readonly string[];
  types?: readonly string[];
  ids?: readonly string[];
  excludeIds?: readonly string[];
  /** Part of the description, case-insensitive. */
  query?: string;
  /** `metadata[key]=value`: values of one key OR'ed, keys AND'ed, compared as strings. */
  metadata: Record<string, string[]>;
}


const SORT_COLUMNS: Record<string, string> = { created_at: 'created_at', description: 'description', type: 'type' };

export async function listBenefits(db: Executor, filter: BenefitFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<Benefit>> {
  const pg = dialectOf(db as Knex) === 'postgres';
  const scoped = () => {
    const query = db(TABLE).whereIn('organization_id', filter.organizationIds).whereNull('deleted_at');
    if (filter.types) query.whereIn('type', filter.types);
    if (filter.ids) query.whereIn('id', filter.ids);
    if (filter.excludeIds) query.whereNotIn('id', filter.excludeIds);
    if (filter.query) query.whereRaw(`lower(description) like ? escape '\\'`, [`%${escapeLike(filter.query.toLowerCase())}%`]);
    whereMetadata(query, `${TABLE}.metadata`, pg, filter.metadata);
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped();
  for (const { column, order } of sorting) {
    if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
    // user_order: the order of the `id` filter, as Polar sorts it.
    else if (column === 'user_order' && filter.ids?.length) {
      query.orderByRaw(`case id ${filter.ids.map(() => 'when ? then cast(? as integer)').join(' ')} end ${order}`, filter.ids.flatMap((id, index) => [id, index]));
    }
  }
  const rows = await query.orderBy('id').limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toBenefit), totalCount: Number(count) };
}

export async function updateBenefitRow(trx: Executor, benefit: Benefit): Promise<void> {
  await trx(TABLE)
    .where({ id: benefit.id })
    .update({
      description: benefit.description,
      visibility: benefit.visibility,
      properties: toDbJson(benefit.properties),
      metadata: toDbJson(benefit.metadata),
      modified_at: toDbTimeOrNull(benefit.modifiedAt),
    });
}

/** Soft delete; true when a live benefit was deleted. */
export async function softDeleteBenefit(trx: Executor, id: string, at: Date): Promise<boolean> {
  const count = await trx(TABLE).where({ id }).whereNull('deleted_at').update({ deleted_at: toDbTime(at), modified_at: toDbTime(at) });
  return count > 0;
}
