import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { dialectOf } from '../../db/database.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { recordEvent } from '../../webhooks/outbox.js';
import { findBenefits } from '../benefits/repository.js';
import { scheduleProductGrants } from '../benefit-grants/product-benefits.js';
import { findOrganization } from '../organizations/repository.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { duplicateIssues, issue, type Issue } from './issues.js';
import { productWithRelations, withRelations } from './relations.js';
import { findProduct, linksOf, listProducts as listRows, writeBenefits, type ProductFilter } from './repository.js';
import type { Product, ProductBenefitsUpdate, StoredProduct } from './schema.js';
import { serializeProduct } from './serialize.js';

type Executor = Parameters<typeof findProduct>[0];

/** What the product use cases need: the database, the clock, and the daemon's URL (media files' public URLs). */
export interface ProductContext {
  db: Database;
  clock: Clock;
  baseUrl: string;
}

/** The organizations a caller may read products in, and those it may also change them in. */
export interface Access {
  read: ReadonlySet<string>;
  write: ReadonlySet<string>;
}

export const notFound = () => new CoreError('not_found', 'PRODUCT_NOT_FOUND', 'Product not found');
export const invalid = (issues: Issue[]) => new CoreError('invalid', 'INVALID_PRODUCT', 'Invalid product', issues);

/** A product the caller may change, locked for the rest of the transaction; else 404 (or 403 for a reader). */
export async function writableProduct(trx: Executor, access: Access, id: string): Promise<StoredProduct> {
  const product = await findProduct(trx, id, access.read, { forUpdate: true });
  if (!product) throw notFound();
  if (!access.write.has(product.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this product but not change it');
  return product;
}

/** The currency every product of the organization must have a price in. */
export async function defaultCurrencyOf(db: Executor, organizationId: string): Promise<string> {
  return (await findOrganization(db, organizationId))?.settings.default_presentment_currency ?? 'usd';
}

/** Reads the product back with its relations and records `type` with it, in the transaction that changed it. */
export async function announce(trx: Parameters<typeof recordEvent>[0], context: ProductContext, stored: StoredProduct, type: 'product.created' | 'product.updated'): Promise<Product> {
  const [product] = await withRelations(trx, [stored]);
  await recordEvent(trx, context.clock, { organizationId: product.organizationId, type, data: serializeProduct(product, context.baseUrl) });
  return product;
}

export async function getProduct(db: Database, readable: ReadonlySet<string>, id: string): Promise<Product> {
  const product = await productWithRelations(db, id, readable);
  if (!product) throw notFound();
  return product;
}

export async function listProducts(db: Database, filter: ProductFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<Product>> {
  const stored = await listRows(db, filter, sorting, page);
  return { items: await withRelations(db, stored.items), totalCount: stored.totalCount };
}

/**
 * Replaces a product's benefits (POST /v1/products/{id}/benefits) with benefits of its organization,
 * in the order given, and announces product.updated. A benefit that is not selectable can be neither
 * added nor removed (Polar keeps those for its own use). Added and removed benefits are granted to and revoked from
 * the product's customers by a job (product-benefits.ts), as Polar does.
 */
export async function updateProductBenefits(context: ProductContext, access: Access, id: string, input: ProductBenefitsUpdate): Promise<Product> {
  return context.db.transaction(async (trx) => {
    const product = await writableProduct(trx, access, id);
    const previous = (await linksOf(trx, [id])).get(id)!.benefitIds;
    const found = new Map((await findBenefits(trx, product.organizationId, [...new Set([...input.benefits, ...previous])])).map((b) => [b.id, b]));
    const issues = duplicateIssues('benefits', input.benefits);
    input.benefits.forEach((benefitId, index) => {
      const benefit = found.get(benefitId);
      if (!benefit) issues.push(issue(['benefits', index], 'Benefit does not exist.'));
      else if (!benefit.selectable && !previous.includes(benefitId)) issues.push(issue(['benefits', index], 'Benefit is not selectable.'));
    });
    for (const removed of previous.filter((benefitId) => !input.benefits.includes(benefitId))) {
      if (found.get(removed)?.selectable === false) issues.push(issue(['benefits'], `Benefit ${removed} is not selectable and cannot be removed.`));
    }
    if (issues.length) throw invalid(issues);
    await writeBenefits(trx, id, input.benefits);
    // As Polar, customers who hold the product get the added benefits and lose the removed ones, in a job.
    const changed = input.benefits.some((b) => !previous.includes(b)) || previous.some((b) => !input.benefits.includes(b));
    if (changed) await scheduleProductGrants(trx, product.organizationId, id, (await organizationClock(trx, context.clock, product.organizationId)).now());
    return announce(trx, context, product, 'product.updated');
  });
}

/** What still uses a product, in the order a seller would read them; none: it can be deleted. */
async function usesOf(trx: Executor, productId: string): Promise<string[]> {
  const has = async (table: string, column = 'product_id') => Boolean(await trx(table).where(column, productId).first(column));
  const uses: string[] = [];
  if (await has('orders')) uses.push('orders');
  if (await has('subscriptions')) uses.push('subscriptions or trials');
  if (await has('discount_products')) uses.push('discounts');
  // A checkout offers its products in product_ids (the selected one is also product_id): any of them counts.
  const offered = dialectOf(trx as Knex) === 'postgres' ? trx('checkouts').whereRaw('product_ids @> ?::jsonb', [JSON.stringify([productId])]) : trx('checkouts').whereRaw('exists (select 1 from json_each(checkouts.product_ids) where value = ?)', [productId]);
  if ((await has('checkouts')) || (await offered.first('id'))) uses.push('checkouts');
  if (await has('checkout_link_products')) uses.push('checkout links');
  // A plan change whose payment is still with the processor moves its subscription onto the product once paid.
  const planned = trx('payments').whereIn('status', ['created', 'requires_action', 'processing']).whereNotNull('plan');
  if (dialectOf(trx as Knex) === 'postgres') planned.whereRaw("plan->>'productId' = ?", [productId]);
  else planned.whereRaw("json_extract(plan, '$.productId') = ?", [productId]);
  if (await planned.first('id')) uses.push('a plan change being paid');
  return uses;
}

/**
 * Deletes a product nothing uses (Polar's `products.delete`, SDK 1.x): its prices, benefits, media and custom
 * fields go with it, and a catalog-as-code key naming it. A product with orders, subscriptions or trials, discounts,
 * checkouts or checkout links is 409 ProductNotDeletable, as Polar: archive it instead (is_archived).
 */
export async function deleteProduct(context: ProductContext, access: Access, id: string): Promise<void> {
  await context.db.transaction(async (trx) => {
    const product = await writableProduct(trx, access, id);
    const uses = await usesOf(trx, product.id);
    if (uses.length) {
      throw new CoreError('conflict', 'PRODUCT_NOT_DELETABLE', `Product is in use (${uses.join(', ')}) and cannot be deleted; archive it instead.`);
    }
    await trx('catalog_keys').where({ organization_id: product.organizationId, kind: 'product', object_id: product.id }).delete();
    // Explicitly, not through ON DELETE CASCADE: a SQLite connection without foreign_keys on would leave them.
    for (const table of ['product_prices', 'product_benefits', 'product_medias', 'product_custom_fields']) await trx(table).where({ product_id: product.id }).delete();
    await trx('products').where({ id: product.id }).delete();
  });
}
