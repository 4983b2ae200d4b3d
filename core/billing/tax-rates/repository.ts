import type { Executor } from '../../db/database.js';
import { fromDbInt, fromDbTime, fromDbTimeOrNull, toDbTime } from '../../db/columns.js';
import { isUniqueViolation } from '../../db/sql.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { TaxRate } from './schema.js';

const TABLE = 'tax_rates';
/** The state as the unique index sees it: '' for the country-wide rate (a NULL would never collide). */
const stateKey = (state: string | null) => state ?? '';

function toTaxRate(row: Record<string, unknown>): TaxRate {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    country: String(row.country),
    state: row.state_key === '' ? null : String(row.state_key),
    basisPoints: fromDbInt(row.basis_points),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

/** Inserts a rate; false when the organization already has one for that country and state. */
export async function insertTaxRate(trx: Executor, rate: TaxRate): Promise<boolean> {
  try {
    await trx(TABLE).insert({
      id: rate.id,
      organization_id: rate.organizationId,
      country: rate.country,
      state_key: stateKey(rate.state),
      basis_points: rate.basisPoints,
      created_at: toDbTime(rate.createdAt),
      modified_at: null,
    });
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

export async function findTaxRate(db: Executor, id: string, organizationIds: Iterable<string>): Promise<TaxRate | undefined> {
  const row = await db(TABLE).where({ id }).whereIn('organization_id', [...organizationIds]).first();
  return row ? toTaxRate(row) : undefined;
}

/** The state's own rate if the organization set one, else the country's. */
export async function findApplicableTaxRate(db: Executor, organizationId: string, country: string, state: string | null): Promise<TaxRate | undefined> {
  const rows = await db(TABLE)
    .where({ organization_id: organizationId, country: country.toUpperCase() })
    .whereIn('state_key', state ? [state, ''] : [''])
    .orderBy('state_key', 'desc');
  return rows[0] ? toTaxRate(rows[0]) : undefined;
}

export async function listTaxRates(db: Executor, filter: { organizationIds: readonly string[]; country?: string }, page: PageQuery): Promise<Page<TaxRate>> {
  const scoped = () => {
    const query = db(TABLE).whereIn('organization_id', filter.organizationIds);
    if (filter.country) query.where({ country: filter.country.toUpperCase() });
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const rows = await scoped().orderBy([{ column: 'country' }, { column: 'state_key' }, { column: 'id' }]).limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toTaxRate), totalCount: Number(count) };
}

export async function deleteTaxRate(trx: Executor, id: string): Promise<boolean> {
  return (await trx(TABLE).where({ id }).delete()) > 0;
}
