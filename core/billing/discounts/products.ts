import type { Knex } from 'knex';
import { fromDbBool, fromDbJson, fromDbTime, fromDbTimeOrNull } from '../../db/columns.js';
import type { Metadata } from '../shared/metadata.js';
import type { DiscountProduct } from './schema.js';

type Executor = Knex | Knex.Transaction;

const PRODUCTS_TABLE = 'products';

/**
 * The products among `ids` (any organization: the service checks ownership), as a discount shows them.
 * This is the one place discounts read the products domain's table, assumed to use Polar's column names;
 * the products domain should replace the body with a call into its own repository, keeping the signature.
 * Until that table exists there are no products, so every id is unknown and a restriction is refused.
 */
export async function findDiscountProducts(db: Executor, ids: readonly string[]): Promise<DiscountProduct[]> {
  if (ids.length === 0 || !(await db.schema.hasTable(PRODUCTS_TABLE))) return [];
  const rows: Record<string, unknown>[] = await db(PRODUCTS_TABLE).whereIn('id', [...new Set(ids)]).select('*');
  return rows.map(toDiscountProduct);
}

const orNull = <T>(value: unknown): T | null => (value === undefined || value === null ? null : (value as T));

function toDiscountProduct(row: Record<string, unknown>): DiscountProduct {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    name: String(row.name),
    description: orNull<string>(row.description),
    visibility: String(row.visibility ?? 'public'),
    recurringInterval: orNull<string>(row.recurring_interval),
    recurringIntervalCount: orNull<number>(row.recurring_interval_count),
    trialInterval: orNull<string>(row.trial_interval),
    trialIntervalCount: orNull<number>(row.trial_interval_count),
    meterInterval: orNull<string>(row.meter_interval),
    meterIntervalCount: orNull<number>(row.meter_interval_count),
    isArchived: fromDbBool(row.is_archived),
    metadata: row.metadata === undefined || row.metadata === null ? {} : fromDbJson<Metadata>(row.metadata),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}
