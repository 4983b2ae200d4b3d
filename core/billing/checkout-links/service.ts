import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database, Executor } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { findDiscount } from '../discounts/repository.js';
import type { StoredDiscount } from '../discounts/schema.js';
import { findPrice, findProductsByIds } from '../products/repository.js';
import { withRelations } from '../products/relations.js';
import type { Product, StoredProduct } from '../products/schema.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { deleteCheckoutLink as deleteRow, findCheckoutLink, insertCheckoutLink, listCheckoutLinks as listRows, saveCheckoutLink, type CheckoutLinkFilter } from './repository.js';
import { CHECKOUT_LINK_SECRET_PREFIX, type CheckoutLink, type CheckoutLinkCreate, type CheckoutLinkUpdate } from './schema.js';

/** The organizations a caller may read checkout links in, and those it may also change them in. */
export interface Access {
  read: ReadonlySet<string>;
  write: ReadonlySet<string>;
}

/** A link with what it is shown with: its products as they are now, and its discount (if it still exists). */
export type CheckoutLinkView = CheckoutLink & { products: Product[]; discount: StoredDiscount | null };

type Issue = { loc: (string | number)[]; msg: string; type: string };
const issue = (path: (string | number)[], msg: string): Issue => ({ loc: ['body', ...path], msg, type: 'value_error' });
export const invalidLink = (issues: Issue[]) => new CoreError('invalid', 'INVALID_CHECKOUT_LINK', issues[0]?.msg ?? 'Invalid checkout link', issues);
export const checkoutLinkNotFound = () => new CoreError('not_found', 'CHECKOUT_LINK_NOT_FOUND', 'Checkout link not found');

/** Reads the products and discount a link is shown with. */
export async function viewOfLink(db: Executor, link: CheckoutLink): Promise<CheckoutLinkView> {
  const stored = new Map((await findProductsByIds(db, link.productIds)).map((product) => [product.id, product]));
  const products = await withRelations(db, link.productIds.map((id) => stored.get(id)).filter((p): p is StoredProduct => p !== undefined));
  const discount = link.discountId ? ((await findDiscount(db, link.discountId, [link.organizationId])) ?? null) : null;
  return { ...link, products, discount };
}

/**
 * The products a link may offer, in order, as Polar checks them: each one the caller can read, not archived, not a
 * draft, all of one organization. Issues at `products.<index>`.
 */
async function validatedProducts(db: Executor, ids: readonly string[], readable: ReadonlySet<string>): Promise<StoredProduct[]> {
  const found = new Map((await findProductsByIds(db, ids, { forShare: true })).filter((p) => readable.has(p.organizationId)).map((p) => [p.id, p]));
  const issues: Issue[] = [];
  const products: StoredProduct[] = [];
  ids.forEach((id, index) => {
    const product = found.get(id);
    if (!product) issues.push(issue(['products', index], 'Product does not exist.'));
    else if (product.isArchived) issues.push(issue(['products', index], 'Product is archived.'));
    else if (product.visibility === 'draft') issues.push(issue(['products', index], 'Product is a draft.'));
    else products.push(product);
  });
  if (new Set(products.map((p) => p.organizationId)).size > 1) issues.push(issue(['products'], 'Products must all belong to the same organization.'));
  if (issues.length) throw invalidLink(issues);
  return products.filter((product, index) => products.findIndex((p) => p.id === product.id) === index);
}

/** The deprecated one-price form: the price's product, when the price and its product are current. */
async function productOfPrice(db: Executor, priceId: string, readable: ReadonlySet<string>): Promise<StoredProduct> {
  const price = await findPrice(db, priceId);
  if (!price || !readable.has(price.organizationId)) throw invalidLink([issue(['product_price_id'], 'Price does not exist.')]);
  if (price.isArchived) throw invalidLink([issue(['product_price_id'], 'Price is archived.')]);
  const [product] = await findProductsByIds(db, [price.productId], { forShare: true });
  if (!product) throw invalidLink([issue(['product_price_id'], 'Price does not exist.')]);
  if (product.isArchived) throw invalidLink([issue(['product_price_id'], 'Product is archived.')]);
  if (product.visibility === 'draft') throw invalidLink([issue(['product_price_id'], 'Product is a draft.')]);
  return product;
}

/** A discount of the organization that applies to every product of the link (one limited to products must list them all). */
async function validatedDiscount(db: Executor, id: string, organizationId: string, productIds: readonly string[]): Promise<StoredDiscount> {
  const discount = await findDiscount(db, id, [organizationId]);
  if (!discount || (discount.productIds.length > 0 && productIds.some((productId) => !discount.productIds.includes(productId)))) {
    throw invalidLink([issue(['discount_id'], 'Discount does not exist or is not applicable to this product.')]);
  }
  return discount;
}

const clockOf = async (db: Executor, clock: Clock, organizationId: string) => (await organizationClock(db, clock, organizationId)).now();

export async function getCheckoutLink(db: Database, readable: ReadonlySet<string>, id: string): Promise<CheckoutLinkView> {
  const link = await findCheckoutLink(db, id, readable);
  if (!link) throw checkoutLinkNotFound();
  return viewOfLink(db, link);
}

export async function listCheckoutLinks(db: Database, filter: CheckoutLinkFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<CheckoutLinkView>> {
  const links = await listRows(db, filter, sorting, page);
  const items: CheckoutLinkView[] = [];
  for (const link of links.items) items.push(await viewOfLink(db, link));
  return { items, totalCount: links.totalCount };
}

/** POST /v1/checkout-links/: a link for the products, in the organization they belong to (which the caller must manage). */
export async function createCheckoutLink(db: Database, clock: Clock, access: Access, input: CheckoutLinkCreate): Promise<CheckoutLinkView> {
  return db.transaction(async (trx) => {
    const products = input.products?.length
      ? await validatedProducts(trx, input.products, access.read)
      : input.product_id
        ? await validatedProducts(trx, [input.product_id], access.read)
        : [await productOfPrice(trx, input.product_price_id!, access.read)];
    const organizationId = products[0].organizationId;
    if (!access.write.has(organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read these products but not make checkout links for them');
    const productIds = products.map((p) => p.id);
    const discount = input.discount_id ? await validatedDiscount(trx, input.discount_id, organizationId, productIds) : null;
    const link: CheckoutLink = {
      id: newId(),
      organizationId,
      clientSecret: `${CHECKOUT_LINK_SECRET_PREFIX}${randomBytes(24).toString('base64url')}`,
      label: input.label ?? null,
      allowDiscountCodes: input.allow_discount_codes,
      requireBillingAddress: input.require_billing_address,
      discountId: discount?.id ?? null,
      trialInterval: input.trial_interval ?? null,
      trialIntervalCount: input.trial_interval_count ?? null,
      successUrl: input.success_url ?? null,
      returnUrl: input.return_url ?? null,
      metadata: input.metadata ?? {},
      productIds,
      createdAt: await clockOf(trx, clock, organizationId),
      modifiedAt: null,
    };
    await insertCheckoutLink(trx, link);
    return viewOfLink(trx, link);
  });
}

/** The live link, which the caller may change; anything else is "not found" (or "not permitted" for a reader). */
async function writable(trx: Executor, access: Access, id: string): Promise<CheckoutLink> {
  const link = await findCheckoutLink(trx, id, access.read, { forUpdate: true });
  if (!link) throw checkoutLinkNotFound();
  if (!access.write.has(link.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this checkout link but not change it');
  return link;
}

/** PATCH /v1/checkout-links/{id}. New products drop a trial when none of them recurs (Polar's rule). */
export async function updateCheckoutLink(db: Database, clock: Clock, access: Access, id: string, input: CheckoutLinkUpdate): Promise<CheckoutLinkView> {
  return db.transaction(async (trx) => {
    const current = await writable(trx, access, id);
    const pick = <T>(value: T | null | undefined, was: T | null): T | null => (value === undefined ? was : value);
    let next: CheckoutLink = {
      ...current,
      label: pick(input.label, current.label),
      allowDiscountCodes: input.allow_discount_codes ?? current.allowDiscountCodes,
      requireBillingAddress: input.require_billing_address ?? current.requireBillingAddress,
      trialInterval: pick(input.trial_interval, current.trialInterval),
      trialIntervalCount: pick(input.trial_interval_count, current.trialIntervalCount),
      successUrl: pick(input.success_url, current.successUrl),
      returnUrl: pick(input.return_url, current.returnUrl),
      metadata: input.metadata ?? current.metadata,
      modifiedAt: await clockOf(trx, clock, current.organizationId),
    };
    if (input.products) {
      const products = await validatedProducts(trx, input.products, access.read);
      if (products[0].organizationId !== current.organizationId) throw invalidLink([issue(['products'], "Products don't belong to the checkout link's organization.")]);
      next = { ...next, productIds: products.map((p) => p.id) };
      if (!products.some((p) => p.recurringInterval !== null)) next = { ...next, trialInterval: null, trialIntervalCount: null };
    }
    if (input.discount_id !== undefined) {
      next.discountId = input.discount_id === null ? null : (await validatedDiscount(trx, input.discount_id, current.organizationId, next.productIds)).id;
    }
    await saveCheckoutLink(trx, next, { products: input.products != null });
    return viewOfLink(trx, next);
  });
}

/** DELETE /v1/checkout-links/{id}: a soft delete; the link's URL answers 404 from then on. */
export async function deleteCheckoutLink(db: Database, clock: Clock, access: Access, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    const link = await writable(trx, access, id);
    await deleteRow(trx, id, await clockOf(trx, clock, link.organizationId));
  });
}
