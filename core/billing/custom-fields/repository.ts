import type { Knex } from 'knex';
import { fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import type { Metadata } from '../shared/metadata.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { CustomField, CustomFieldProperties, CustomFieldType } from './schema.js';
import { isUniqueViolation } from '../../db/sql.js';
import { dialectOf } from '../../db/database.js';

type Executor = Knex | Knex.Transaction;
/** The products domain references this table by name when it attaches fields to products. */
export const CUSTOM_FIELDS_TABLE = 'custom_fields';
const TABLE = CUSTOM_FIELDS_TABLE;

/** A custom field from its row (also from a JSON row: another repository reading it with its own). */
export function toCustomField(row: Record<string, unknown>): CustomField {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    type: row.type as CustomFieldType,
    slug: String(row.slug),
    name: String(row.name),
    properties: fromDbJson<CustomFieldProperties>(row.properties),
    metadata: fromDbJson<Metadata>(row.metadata),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

/** Inserts a field; false when the organization has (or had) a field with this slug. */
export async function insertCustomField(trx: Executor, field: CustomField): Promise<boolean> {
  try {
    await trx(TABLE).insert({
      id: field.id,
      organization_id: field.organizationId,
      type: field.type,
      slug: field.slug,
      name: field.name,
      properties: toDbJson(field.properties),
      metadata: toDbJson(field.metadata),
      created_at: toDbTime(field.createdAt),
      modified_at: null,
    });
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/** Writes name, slug, properties and metadata; false when the slug belongs to another field. */
export async function saveCustomField(trx: Executor, field: CustomField): Promise<boolean> {
  try {
    await trx(TABLE)
      .where({ id: field.id })
      .update({ slug: field.slug, name: field.name, properties: toDbJson(field.properties), metadata: toDbJson(field.metadata), modified_at: toDbTimeOrNull(field.modifiedAt) });
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/** A live (not deleted) field of one of the organizations. */
/** A live custom field; `forUpdate` locks its row on PostgreSQL until the transaction ends (changes apply one by one). */
export async function findCustomField(db: Executor, id: string, organizationIds: readonly string[], options: { forUpdate?: boolean } = {}): Promise<CustomField | undefined> {
  const query = db(TABLE).where({ id }).whereIn('organization_id', organizationIds).whereNull('deleted_at');
  if (options.forUpdate && dialectOf(db as Knex) === 'postgres') query.forUpdate();
  const row = await query.first();
  return row ? toCustomField(row) : undefined;
}

/** Live custom fields by id, in one query (callers check each field's organization). */
export async function findCustomFieldsByIds(db: Executor, ids: readonly string[]): Promise<Map<string, CustomField>> {
  if (ids.length === 0) return new Map();
  const rows = await db(TABLE).whereIn('id', [...new Set(ids)]).whereNull('deleted_at');
  return new Map(rows.map((row) => [String(row.id), toCustomField(row)]));
}

const SORT_COLUMNS: Record<string, string> = { created_at: 'created_at', slug: 'slug', name: 'name', type: 'type' };

/** `%query%` for LIKE, with the query's own wildcards taken literally. */
const containing = (query: string) => `%${query.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function listCustomFields(
  db: Executor,
  filter: { organizationIds: readonly string[]; query?: string; types?: readonly CustomFieldType[] },
  sorting: readonly SortCriterion[],
  page: PageQuery,
): Promise<Page<CustomField>> {
  const scoped = () => {
    const query = db(TABLE).whereIn('organization_id', filter.organizationIds).whereNull('deleted_at');
    if (filter.types) query.whereIn('type', filter.types);
    if (filter.query) {
      const pattern = containing(filter.query);
      query.andWhere((q) => q.whereRaw("lower(name) like ? escape '\\'", [pattern]).orWhereRaw("lower(slug) like ? escape '\\'", [pattern]));
    }
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped();
  for (const { column, order } of sorting) if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
  const rows = await query.orderBy('id').limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toCustomField), totalCount: Number(count) };
}

/** Soft delete: values already collected under the slug keep their meaning, so the slug stays taken. */
export async function deleteCustomField(trx: Executor, id: string, at: Date): Promise<void> {
  await trx(TABLE).where({ id }).whereNull('deleted_at').update({ deleted_at: toDbTime(at) });
}
