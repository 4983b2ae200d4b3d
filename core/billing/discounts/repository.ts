import type { Knex } from 'knex';
import { fromDbInt, fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import type { Metadata } from '../shared/metadata.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { CurrencyAmounts, DiscountDuration, StoredDiscount } from './schema.js';
import { isUniqueViolation } from '../../db/sql.js';
import { dialectOf } from '../../db/database.js';

type Executor = Knex | Knex.Transaction;
const TABLE = 'discounts';
const PRODUCTS = 'discount_products';
const AMOUNTS = 'discount_amounts';

/** Codes are unique and looked up case-insensitively: this is the form they are compared in. */
export const codeKey = (code: string): string => code.toUpperCase();

/** What a discounts row is read with: its products, its amounts per currency, its organization's default currency. */
interface Related {
  productIds: string[];
  amounts: CurrencyAmounts;
  organizationCurrency: string;
}

function toStoredDiscount(row: Record<string, unknown>, related: Related): StoredDiscount {
  const common = {
    id: String(row.id),
    organizationId: String(row.organization_id),
    name: String(row.name),
    code: (row.code as string | null) ?? null,
    duration: row.duration as DiscountDuration,
    durationInMonths: row.duration_in_months === null ? null : fromDbInt(row.duration_in_months),
    startsAt: fromDbTimeOrNull(row.starts_at),
    endsAt: fromDbTimeOrNull(row.ends_at),
    maxRedemptions: row.max_redemptions === null ? null : fromDbInt(row.max_redemptions),
    maxRedemptionsPerCustomer: row.max_redemptions_per_customer === null || row.max_redemptions_per_customer === undefined ? null : fromDbInt(row.max_redemptions_per_customer),
    redemptionsCount: fromDbInt(row.redemptions_count),
    metadata: fromDbJson<Metadata>(row.metadata),
    productIds: related.productIds,
    organizationCurrency: related.organizationCurrency,
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
  return row.type === 'fixed'
    ? { ...common, type: 'fixed', amounts: related.amounts }
    : { ...common, type: 'percentage', basisPoints: fromDbInt(row.basis_points) };
}

/** The columns a discount's editable state is written to (created and updated alike). */
function toRow(discount: StoredDiscount) {
  return {
    name: discount.name,
    code: discount.code,
    code_key: discount.code === null ? null : codeKey(discount.code),
    type: discount.type,
    duration: discount.duration,
    duration_in_months: discount.durationInMonths,
    // Superseded by discount_amounts (0038).
    amount: null,
    currency: null,
    basis_points: discount.type === 'percentage' ? discount.basisPoints : null,
    starts_at: toDbTimeOrNull(discount.startsAt),
    ends_at: toDbTimeOrNull(discount.endsAt),
    max_redemptions: discount.maxRedemptions,
    max_redemptions_per_customer: discount.maxRedemptionsPerCustomer,
    metadata: toDbJson(discount.metadata),
    modified_at: toDbTimeOrNull(discount.modifiedAt),
  };
}

async function productIdsOf(db: Executor, discountIds: readonly string[]): Promise<Map<string, string[]>> {
  const byDiscount = new Map<string, string[]>(discountIds.map((id) => [id, []]));
  if (discountIds.length === 0) return byDiscount;
  const rows = await db(PRODUCTS).whereIn('discount_id', discountIds).orderBy(['discount_id', 'position']).select('discount_id', 'product_id');
  for (const row of rows) byDiscount.get(row.discount_id)?.push(row.product_id);
  return byDiscount;
}

/** Reads discounts rows whole, three look-ups for the lot; one after another, as inside a transaction they must. */
async function hydrate(db: Executor, rows: Record<string, unknown>[]): Promise<StoredDiscount[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => String(row.id));
  const products = await productIdsOf(db, ids);
  const amounts = new Map<string, CurrencyAmounts>(ids.map((id) => [id, {}]));
  for (const row of await db(AMOUNTS).whereIn('discount_id', ids).orderBy(['discount_id', 'currency'])) {
    amounts.get(row.discount_id)![row.currency] = fromDbInt(row.amount);
  }
  const organizationIds = [...new Set(rows.map((row) => String(row.organization_id)))];
  const settings = await db('organization_settings').whereIn('organization_id', organizationIds).select('organization_id', 'default_presentment_currency');
  const currencies = new Map<string, string>(settings.map((row: { organization_id: string; default_presentment_currency: string | null }) => [row.organization_id, row.default_presentment_currency ?? 'usd']));
  return rows.map((row) =>
    toStoredDiscount(row, {
      productIds: products.get(String(row.id)) ?? [],
      amounts: amounts.get(String(row.id)) ?? {},
      organizationCurrency: currencies.get(String(row.organization_id)) ?? 'usd',
    }),
  );
}

/** Discounts by id, deleted ones included (orders and subscriptions keep pointing at what they redeemed). */
export async function findDiscountsByIds(db: Executor, ids: readonly string[]): Promise<StoredDiscount[]> {
  return ids.length ? hydrate(db, await db(TABLE).whereIn('id', ids)) : [];
}

async function writeAmounts(trx: Knex.Transaction, discount: StoredDiscount) {
  await trx(AMOUNTS).where({ discount_id: discount.id }).delete();
  if (discount.type === 'fixed') {
    const rows = Object.entries(discount.amounts).map(([currency, amount]) => ({ discount_id: discount.id, currency, amount }));
    if (rows.length) await trx(AMOUNTS).insert(rows);
  }
}

async function writeProducts(trx: Knex.Transaction, discountId: string, productIds: readonly string[]) {
  await trx(PRODUCTS).where({ discount_id: discountId }).delete();
  if (productIds.length) await trx(PRODUCTS).insert(productIds.map((productId, position) => ({ discount_id: discountId, product_id: productId, position })));
}

/** Inserts a discount and its products; false when a live discount of the organization has the code. */
export async function insertDiscount(trx: Knex.Transaction, discount: StoredDiscount): Promise<boolean> {
  try {
    await trx(TABLE).insert({
      ...toRow(discount),
      id: discount.id,
      organization_id: discount.organizationId,
      redemptions_count: discount.redemptionsCount,
      created_at: toDbTime(discount.createdAt),
    });
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
  await writeProducts(trx, discount.id, discount.productIds);
  await writeAmounts(trx, discount);
  return true;
}

/** Writes an updated discount and its products; false when another live discount has the code. */
export async function saveDiscount(trx: Knex.Transaction, discount: StoredDiscount): Promise<boolean> {
  try {
    await trx(TABLE).where({ id: discount.id }).update(toRow(discount));
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
  await writeProducts(trx, discount.id, discount.productIds);
  await writeAmounts(trx, discount);
  return true;
}

/**
 * A live (not deleted) discount of one of the organizations. `forUpdate` locks its row on PostgreSQL until the
 * transaction ends, so a redemption cannot slip in between an update's check and its write.
 */
export async function findDiscount(db: Executor, id: string, organizationIds: readonly string[], options: { forUpdate?: boolean } = {}): Promise<StoredDiscount | undefined> {
  const query = db(TABLE).where({ id }).whereIn('organization_id', organizationIds).whereNull('deleted_at');
  if (options.forUpdate && dialectOf(db as Knex) === 'postgres') query.forUpdate();
  const row = await query.first();
  return row ? (await hydrate(db, [row]))[0] : undefined;
}

/** The live discount an organization gives out under a code, whatever its case. */
export async function findDiscountByCode(db: Executor, organizationId: string, code: string): Promise<StoredDiscount | undefined> {
  const row = await db(TABLE).where({ organization_id: organizationId, code_key: codeKey(code) }).whereNull('deleted_at').first();
  return row ? (await hydrate(db, [row]))[0] : undefined;
}

const SORT_COLUMNS: Record<string, string> = { created_at: 'created_at', name: 'name', code: 'code_key', redemptions_count: 'redemptions_count', ends_at: 'ends_at' };

/** `%query%` for LIKE, with the query's own wildcards taken literally. */
const containing = (query: string) => `%${query.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function listDiscounts(
  db: Executor,
  filter: { organizationIds: readonly string[]; query?: string },
  sorting: readonly SortCriterion[],
  page: PageQuery,
): Promise<Page<StoredDiscount>> {
  const scoped = () => {
    const query = db(TABLE).whereIn('organization_id', filter.organizationIds).whereNull('deleted_at');
    if (filter.query) {
      const pattern = containing(filter.query);
      query.andWhere((q) => q.whereRaw("lower(name) like ? escape '\\'", [pattern]).orWhereRaw("lower(code) like ? escape '\\'", [pattern]));
    }
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped();
  for (const { column, order } of sorting) if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
  const rows = await query.orderBy('id').limit(page.limit).offset(offsetOf(page));
  return { items: await hydrate(db, rows), totalCount: Number(count) };
}

/** Soft delete: the row stays for the orders that redeemed it, and its code is free again. */
export async function deleteDiscount(trx: Executor, id: string, organizationIds: readonly string[], at: Date): Promise<boolean> {
  const count = await trx(TABLE).where({ id }).whereIn('organization_id', organizationIds).whereNull('deleted_at').update({ deleted_at: toDbTime(at) });
  return count > 0;
}

/**
 * Counts one redemption unless the discount is used up (or deleted): one guarded UPDATE, so concurrent
 * checkouts can never redeem it more than `max_redemptions` times. Returns whether it was counted.
 */
export async function claimRedemption(trx: Executor, id: string): Promise<boolean> {
  const count = await trx(TABLE)
    .where({ id })
    .whereNull('deleted_at')
    .andWhere((q) => q.whereNull('max_redemptions').orWhereRaw('redemptions_count < max_redemptions'))
    .update({ redemptions_count: trx.raw('redemptions_count + 1') });
  return count > 0;
}

/** Gives back a redemption claimed for a purchase that did not go through (never below zero). */
export async function releaseRedemption(trx: Executor, id: string): Promise<void> {
  await trx(TABLE).where({ id }).where('redemptions_count', '>', 0).update({ redemptions_count: trx.raw('redemptions_count - 1') });
}
