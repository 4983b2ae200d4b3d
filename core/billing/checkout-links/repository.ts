import { dialectOf, type Executor } from '../../db/database.js';
import { fromDbBool, fromDbInt, fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import type { Interval } from '../products/schema.js';
import type { Metadata } from '../shared/metadata.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { CheckoutLink } from './schema.js';

const TABLE = 'checkout_links';
const PRODUCTS = 'checkout_link_products';

function toCheckoutLink(row: Record<string, unknown>, productIds: string[]): CheckoutLink {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    clientSecret: String(row.client_secret),
    label: (row.label as string | null) ?? null,
    allowDiscountCodes: fromDbBool(row.allow_discount_codes),
    requireBillingAddress: fromDbBool(row.require_billing_address),
    discountId: (row.discount_id as string | null) ?? null,
    trialInterval: (row.trial_interval as Interval | null) ?? null,
    trialIntervalCount: row.trial_interval_count === null ? null : fromDbInt(row.trial_interval_count),
    successUrl: (row.success_url as string | null) ?? null,
    returnUrl: (row.return_url as string | null) ?? null,
    metadata: fromDbJson<Metadata>(row.metadata),
    productIds,
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

/** Rows with their products, read in one more query. */
async function withProducts(db: Executor, rows: Record<string, unknown>[]): Promise<CheckoutLink[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => String(row.id));
  const byLink = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const row of await db(PRODUCTS).whereIn('checkout_link_id', ids).orderBy(['checkout_link_id', 'position'])) byLink.get(String(row.checkout_link_id))?.push(String(row.product_id));
  return rows.map((row) => toCheckoutLink(row, byLink.get(String(row.id)) ?? []));
}

const editable = (link: CheckoutLink) => ({
  label: link.label,
  allow_discount_codes: link.allowDiscountCodes,
  require_billing_address: link.requireBillingAddress,
  discount_id: link.discountId,
  trial_interval: link.trialInterval,
  trial_interval_count: link.trialIntervalCount,
  success_url: link.successUrl,
  return_url: link.returnUrl,
  metadata: toDbJson(link.metadata),
  modified_at: toDbTimeOrNull(link.modifiedAt),
});

async function writeProducts(trx: Executor, linkId: string, productIds: readonly string[]): Promise<void> {
  await trx(PRODUCTS).where({ checkout_link_id: linkId }).delete();
  await trx(PRODUCTS).insert(productIds.map((productId, position) => ({ checkout_link_id: linkId, product_id: productId, position })));
}

export async function insertCheckoutLink(trx: Executor, link: CheckoutLink): Promise<void> {
  await trx(TABLE).insert({ id: link.id, organization_id: link.organizationId, client_secret: link.clientSecret, created_at: toDbTime(link.createdAt), ...editable(link) });
  await writeProducts(trx, link.id, link.productIds);
}

/** Writes a link's editable fields and, when they changed, its products. */
export async function saveCheckoutLink(trx: Executor, link: CheckoutLink, options: { products: boolean }): Promise<void> {
  await trx(TABLE).where({ id: link.id }).update(editable(link));
  if (options.products) await writeProducts(trx, link.id, link.productIds);
}

/** A live (not deleted) link of one of the organizations; `forUpdate` locks its row on PostgreSQL. */
export async function findCheckoutLink(db: Executor, id: string, organizationIds: Iterable<string>, options: { forUpdate?: boolean } = {}): Promise<CheckoutLink | undefined> {
  const query = db(TABLE).where({ id }).whereIn('organization_id', [...organizationIds]).whereNull('deleted_at');
  if (options.forUpdate && dialectOf(db) === 'postgres') query.forUpdate();
  const row = await query.first();
  return row ? (await withProducts(db, [row]))[0] : undefined;
}

/** The live link a public URL names. */
export async function findCheckoutLinkByClientSecret(db: Executor, clientSecret: string): Promise<CheckoutLink | undefined> {
  const row = await db(TABLE).where({ client_secret: clientSecret }).whereNull('deleted_at').first();
  return row ? (await withProducts(db, [row]))[0] : undefined;
}

export interface CheckoutLinkFilter {
  organizationIds: readonly string[];
  productIds?: readonly string[];
}

const SORT_COLUMNS: Record<string, string> = { created_at: 'created_at', label: 'label', success_url: 'success_url', allow_discount_codes: 'allow_discount_codes' };

export async function listCheckoutLinks(db: Executor, filter: CheckoutLinkFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<CheckoutLink>> {
  const scoped = () => {
    const query = db(TABLE).whereIn(`${TABLE}.organization_id`, filter.organizationIds).whereNull(`${TABLE}.deleted_at`);
    if (filter.productIds) query.whereIn(`${TABLE}.id`, db(PRODUCTS).select('checkout_link_id').whereIn('product_id', filter.productIds));
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped();
  for (const { column, order } of sorting) if (SORT_COLUMNS[column]) query.orderBy(`${TABLE}.${SORT_COLUMNS[column]}`, order);
  const rows = await query.orderBy(`${TABLE}.id`).limit(page.limit).offset(offsetOf(page));
  return { items: await withProducts(db, rows), totalCount: Number(count) };
}

/** Soft delete: the link is no longer found, and its public URL opens nothing. */
export async function deleteCheckoutLink(trx: Executor, id: string, at: Date): Promise<void> {
  await trx(TABLE).where({ id }).whereNull('deleted_at').update({ deleted_at: toDbTime(at) });
}
