import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { findProductsByIds } from '../products/repository.js';
import { deleteDiscount as deleteRow, findDiscount, insertDiscount, listDiscounts as listRows, saveDiscount } from './repository.js';
import { legacyAmount, windowIssues, type CurrencyAmounts, type Discount, type DiscountCreate, type DiscountProduct, type DiscountTerms, type DiscountUpdate, type StoredDiscount } from './schema.js';

/** The organizations a caller may read in, and those it may also change things in. */
export interface Access {
  read: ReadonlySet<string>;
  write: ReadonlySet<string>;
}

type Issue = { loc: (string | number)[]; msg: string; type: string };

const notFound = () => new CoreError('not_found', 'DISCOUNT_NOT_FOUND', 'Discount not found');
const invalid = (issues: Issue[]) => new CoreError('invalid', 'INVALID_DISCOUNT', 'Invalid discount', issues);
const issue = (path: (string | number)[], msg: string): Issue => ({ loc: ['body', ...path], msg, type: 'value_error' });
const codeTaken = () => new CoreError('invalid', 'DISCOUNT_CODE_TAKEN', 'A discount with this code exists', [issue(['code'], 'Discount with this code already exists.')]);

/** Attaches the products each discount is restricted to, in one look-up for the lot. */
async function withProducts(db: Database, discounts: StoredDiscount[]): Promise<Discount[]> {
  const found = new Map<string, DiscountProduct>((await findProductsByIds(db, discounts.flatMap((d) => d.productIds))).map((p) => [p.id, p]));
  return discounts.map((discount) => ({
    ...discount,
    products: discount.productIds.map((id) => found.get(id)).filter((p): p is DiscountProduct => p !== undefined),
  }));
}

/** Checks that every id names a product of the organization (held until the discount is written); the ids without repeats, in order. */
async function productsOf(db: Database, organizationId: string, ids: readonly string[]): Promise<string[]> {
  const found = new Set((await findProductsByIds(db, ids, { forShare: true })).filter((p) => p.organizationId === organizationId).map((p) => p.id));
  const issues = ids.flatMap((id, index) => (found.has(id) ? [] : [issue(['products', index], 'Product not found.')]));
  if (issues.length) throw invalid(issues);
  return [...new Set(ids)];
}

/**
 * The amounts a create or update gives a fixed discount: `amounts` as sent, or the deprecated `amount` in `currency`
 * (else `fallback`) as a one-currency map, as Polar turns it into one; undefined when it gives neither.
 */
function fixedAmounts(input: { amount?: number | null; currency?: string | null; amounts?: Partial<Record<string, number>> | null }, fallback: string): CurrencyAmounts | undefined {
  if (input.amount !== null && input.amount !== undefined) return { [input.currency ?? fallback]: input.amount };
  if (!input.amounts) return undefined;
  return Object.fromEntries(Object.entries(input.amounts).filter((entry): entry is [string, number] => entry[1] !== undefined));
}

const sameAmounts = (a: CurrencyAmounts, b: CurrencyAmounts) => Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([currency, amount]) => b[currency] === amount);

export async function getDiscount(db: Database, readable: ReadonlySet<string>, id: string): Promise<Discount> {
  const found = await findDiscount(db, id, [...readable]);
  if (!found) throw notFound();
  return (await withProducts(db, [found]))[0];
}

export async function listDiscounts(
  db: Database,
  filter: { organizationIds: readonly string[]; query?: string },
  sorting: readonly SortCriterion[],
  page: PageQuery,
): Promise<Page<Discount>> {
  const stored = await listRows(db, filter, sorting, page);
  return { items: await withProducts(db, stored.items), totalCount: stored.totalCount };
}

export async function createDiscount(db: Database, clock: Clock, organizationId: string, input: DiscountCreate): Promise<Discount> {
  return db.transaction(async (trx) => {
    // The schema has made sure a fixed discount has an amount in one form or the other.
    const terms: DiscountTerms = input.type === 'fixed' ? { type: 'fixed', amounts: fixedAmounts(input, 'usd')! } : { type: 'percentage', basisPoints: input.basis_points };
    const discount: StoredDiscount = {
      ...terms,
      id: newId(),
      organizationId,
      name: input.name,
      code: input.code ?? null,
      duration: input.duration,
      durationInMonths: input.duration === 'repeating' ? (input.duration_in_months ?? null) : null,
      startsAt: input.starts_at ?? null,
      endsAt: input.ends_at ?? null,
      maxRedemptions: input.max_redemptions ?? null,
      maxRedemptionsPerCustomer: input.max_redemptions_per_customer ?? null,
      redemptionsCount: 0,
      metadata: input.metadata ?? {},
      productIds: await productsOf(trx, organizationId, input.products ?? []),
      organizationCurrency: 'usd', // read back below
      createdAt: clock.now(),
      modifiedAt: null,
    };
    if (!(await insertDiscount(trx, discount))) throw codeTaken();
    return (await withProducts(trx, [(await findDiscount(trx, discount.id, [organizationId]))!]))[0];
  });
}

function changedTerms(current: DiscountTerms, next: DiscountTerms, input: DiscountUpdate): string[] {
  if (current.type === 'fixed' && next.type === 'fixed') {
    if (sameAmounts(current.amounts, next.amounts)) return [];
    return input.amounts ? ['amounts'] : ['amount'];
  }
  return current.type === 'percentage' && next.type === 'percentage' && next.basisPoints !== current.basisPoints ? ['basis_points'] : [];
}

/** The new terms of an update, and the issues that refuse it. Type and, once redeemed, the terms are fixed. */
function nextTerms(current: StoredDiscount, input: DiscountUpdate): { terms: DiscountTerms; issues: Issue[] } {
  const issues: Issue[] = [];
  if (input.type && input.type !== current.type) issues.push(issue(['type'], 'Type cannot be changed.'));
  const terms: DiscountTerms =
    current.type === 'fixed'
      ? { type: 'fixed', amounts: fixedAmounts(input, legacyAmount(current.amounts, current.organizationCurrency).currency) ?? current.amounts }
      : { type: 'percentage', basisPoints: input.basis_points ?? current.basisPoints };
  if (current.redemptionsCount > 0) {
    for (const field of changedTerms(current, terms, input)) issues.push(issue([field], 'This field cannot be changed because the discount has already been redeemed.'));
  }
  return { terms, issues };
}

export async function updateDiscount(db: Database, clock: Clock, access: Access, id: string, input: DiscountUpdate): Promise<Discount> {
  return db.transaction(async (trx) => {
    const current = await findDiscount(trx, id, [...access.read], { forUpdate: true });
    if (!current) throw notFound();
    if (!access.write.has(current.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this discount but not change it');

    const { terms, issues } = nextTerms(current, input);
    if (input.duration && input.duration !== current.duration) issues.push(issue(['duration'], 'Duration cannot be changed.'));
    if (current.duration !== 'repeating' && input.duration_in_months !== null && input.duration_in_months !== undefined) {
      issues.push(issue(['duration_in_months'], 'Only a repeating discount takes duration_in_months'));
    }
    const startsAt = input.starts_at === undefined ? current.startsAt : input.starts_at;
    const endsAt = input.ends_at === undefined ? current.endsAt : input.ends_at;
    issues.push(...windowIssues(startsAt, endsAt).map((i) => issue(i.path, i.message)));
    if (issues.length) throw invalid(issues);

    const next: StoredDiscount = {
      ...current,
      ...terms,
      name: input.name ?? current.name,
      code: input.code === undefined ? current.code : input.code,
      durationInMonths: current.duration === 'repeating' ? (input.duration_in_months ?? current.durationInMonths) : null,
      startsAt,
      endsAt,
      maxRedemptions: input.max_redemptions === undefined ? current.maxRedemptions : input.max_redemptions,
      maxRedemptionsPerCustomer: input.max_redemptions_per_customer === undefined ? current.maxRedemptionsPerCustomer : input.max_redemptions_per_customer,
      metadata: input.metadata ?? current.metadata,
      productIds: input.products ? await productsOf(trx, current.organizationId, input.products) : current.productIds,
      modifiedAt: clock.now(),
    };
    if (!(await saveDiscount(trx, next))) throw codeTaken();
    return (await withProducts(trx, [next]))[0];
  });
}

/** Soft-deletes a discount (204): it stops being found, and its code may be given to another. */
export async function deleteDiscount(db: Database, clock: Clock, access: Access, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    const current = await findDiscount(trx, id, [...access.read], { forUpdate: true });
    if (!current) throw notFound();
    if (!access.write.has(current.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this discount but not delete it');
    await deleteRow(trx, id, [current.organizationId], clock.now());
  });
}
