import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database, Executor } from '../../db/database.js';
import { CoreError, isCoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { scheduleJob } from '../../jobs/jobs.js';
import type { PaymentProcessor } from '../../payments/processor.js';
import { recordEvent } from '../../webhooks/outbox.js';
import { findCustomers } from '../customers/repository.js';
import { findDiscount, findDiscountByCode } from '../discounts/repository.js';
import type { StoredDiscount } from '../discounts/schema.js';
import { findOrganization } from '../organizations/repository.js';
import { findProductsByIds } from '../products/repository.js';
import { withRelations } from '../products/relations.js';
import type { Product } from '../products/schema.js';
import { taxBasisPointsFor } from '../pricing/amounts.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { customFieldDataIssues } from './custom-field-data.js';
import { CHECKOUT_EXPIRY_JOB } from './job-kinds.js';
import { checkoutAmounts, discountIssue, discountProblem, invalid, issue, selectPrice, subtotalOf } from './pricing.js';
import { findCheckout, findCheckoutByClientSecret, insertCheckout, listCheckouts as listRows, saveCheckout, type CheckoutFilter } from './repository.js';
import { CHECKOUT_TTL_MS, type Checkout, type CheckoutCreate, type CheckoutUpdate, type CheckoutUpdatePublic, type StoredCheckout } from './schema.js';
import { serializeCheckout } from './serialize.js';
import { viewOf } from './view.js';
import { assertCanSubscribe, assertDiscountRedeemable } from './subscription-rules.js';

/** What the checkout use cases need: the database, Till's clock, the processor, and the daemon's public URL. */
export interface CheckoutDeps {
  db: Database;
  clock: Clock;
  payments: PaymentProcessor;
  /** Stripe when configured: the processor of organizations not marked sandbox (core/payments/select.ts). */
  livePayments?: PaymentProcessor | null;
  /** tilld: an organization not marked sandbox cannot be paid without a live processor (core/payments/select.ts). */
  liveRequired?: boolean;
  baseUrl: string;
}

/** The organizations a caller may read checkouts in, and those it may also change them in. */
export interface Access {
  read: ReadonlySet<string>;
  write: ReadonlySet<string>;
}

export const checkoutNotFound = () => new CoreError('not_found', 'CHECKOUT_NOT_FOUND', 'Checkout not found');
export const notOpen = (status: string) => new CoreError('forbidden', 'CHECKOUT_NOT_OPEN', `This checkout is ${status}, not open: it cannot be changed or paid any more.`);
export const expired = () => new CoreError('conflict', 'CHECKOUT_EXPIRED', 'This checkout has expired. Start a new one.');

/** Refuses changes to a checkout that is not open, or whose time ran out (even before its expiry job ran). */
export function assertOpen(stored: StoredCheckout, now: Date): void {
  if (stored.status === 'expired' || (stored.status === 'open' && now >= stored.expiresAt)) throw expired();
  if (stored.status !== 'open') throw notOpen(stored.status);
}

/** Products of the organization, in the order given, each current (not archived); issues at `field`. */
async function offeredProducts(db: Executor, organizationId: string, ids: readonly string[], field: string): Promise<Product[]> {
  const found = new Map((await findProductsByIds(db, ids, { forShare: true })).filter((p) => p.organizationId === organizationId).map((p) => [p.id, p]));
  const issues = ids.flatMap((id, index) => {
    const product = found.get(id);
    if (!product) return [issue([field, index], 'Product does not exist.')];
    if (product.isArchived) return [issue([field, index], 'Product is archived.')];
    return [];
  });
  if (issues.length) throw invalid(issues);
  return withRelations(db, [...new Set(ids)].map((id) => found.get(id)!));
}

/** How a change names the discount: by id (the seller), by code (the customer), or not at all. */
type DiscountChange = { kind: 'keep' } | { kind: 'id'; id: string | null } | { kind: 'code'; code: string | null };

/**
 * Validates a checkout about to be written and computes its amounts: the product among those offered, its price,
 * the discount (a named one must apply, or the change is refused; a kept one that stops applying is dropped),
 * the custom field data, and the tax at the billing address. The one place a checkout's amounts are set.
 */
async function settle(trx: Executor, now: Date, next: StoredCheckout, discountChange: DiscountChange, offered: Product[]): Promise<StoredCheckout> {
  const product = offered.find((p) => p.id === next.productId);
  if (!product) throw invalid([issue(['product_id'], 'This product is not offered by this checkout.')]);
  const keepsPrice = product.prices.some((p) => p.id === next.productPriceId);
  const price = selectPrice(product, { priceId: keepsPrice ? next.productPriceId : null, currency: keepsPrice ? null : next.currency });
  const subtotal = subtotalOf(price, next.customAmount);

  let discount: StoredDiscount | null = null;
  const purchase = { now, productId: product.id, currency: price.priceCurrency, price };
  if (discountChange.kind === 'id' && discountChange.id) {
    discount = (await findDiscount(trx, discountChange.id, [next.organizationId])) ?? null;
    if (!discount) throw invalid([issue(['discount_id'], 'Discount does not exist.')]);
    const problem = discountProblem(discount, purchase);
    if (problem) throw invalid([issue(['discount_id'], problem)]);
  } else if (discountChange.kind === 'code' && discountChange.code) {
    if (!next.allowDiscountCodes) throw invalid([issue(['discount_code'], 'This checkout does not take discount codes.')]);
    discount = (await findDiscountByCode(trx, next.organizationId, discountChange.code)) ?? null;
    if (!discount) throw invalid([issue(['discount_code'], 'This discount code does not exist.')]);
    const problem = discountProblem(discount, purchase);
    if (problem) throw invalid([issue(['discount_code'], problem)]);
  } else if (discountChange.kind === 'keep' && next.discountId) {
    // A discount already on the checkout goes when what is bought no longer qualifies (another product or
    // currency); one that ran out or expired stays shown, and confirmation refuses it clearly rather than
    // charging more than the customer was shown.
    const kept = (await findDiscount(trx, next.discountId, [next.organizationId])) ?? null;
    discount = kept && discountIssue(kept, purchase)?.kind !== 'scope' ? kept : null;
  }

  const dataIssues = customFieldDataIssues(product.attachedCustomFields, next.customFieldData, { complete: false });
  if (dataIssues.length) throw invalid(dataIssues);

  const taxBasisPoints = await taxBasisPointsFor(trx, next.organizationId, next.customerBillingAddress);
  return {
    ...next,
    productPriceId: price.id,
    currency: price.priceCurrency,
    discountId: discount?.id ?? null,
    amounts: checkoutAmounts(subtotal, price.priceCurrency, discount, taxBasisPoints),
  };
}

const refusesOnlyTheDiscount = (error: unknown) =>
  isCoreError(error) &&
  error.kind === 'invalid' &&
  Array.isArray(error.details) &&
  (error.details as { loc: unknown[] }[]).every((detail) => detail.loc[1] === 'discount_id' || detail.loc[1] === 'discount_code');

/**
 * Settles with the first of the discount changes that is accepted; a refusal of the discount moves on to the next
 * change, any other refusal (and the last change's) stands.
 */
async function settleWithFirstDiscount(trx: Executor, now: Date, next: StoredCheckout, changes: DiscountChange[], offered: Product[]): Promise<StoredCheckout> {
  for (const [index, change] of changes.entries()) {
    try {
      return await settle(trx, now, next, change, offered);
    } catch (error) {
      if (index === changes.length - 1 || !refusesOnlyTheDiscount(error)) throw error;
    }
  }
  throw new Error('unreachable: no discount change to settle with');
}

/** Records checkout.created/updated/expired with the checkout as the API shows it, in the transaction of the change. */
export async function announceCheckout(trx: Knex.Transaction, clock: Clock, baseUrl: string, checkout: Checkout, type: 'checkout.created' | 'checkout.updated' | 'checkout.expired') {
  await recordEvent(trx, clock, { organizationId: checkout.organizationId, type, data: serializeCheckout(checkout, baseUrl) });
}

/** A customer of the organization named by id; 422 at `customer_id` otherwise. */
async function customerFor(trx: Executor, organizationId: string, id: string) {
  const [customer] = await findCustomers(trx, { id }, [organizationId]);
  if (!customer) throw invalid([issue(['customer_id'], 'Customer does not exist.')]);
  return customer;
}

/**
 * The organization a new checkout sells for, as Polar finds it: the organization of its first product (or price),
 * when the caller may create checkouts there; else the caller's only organization (the products are then checked
 * against it and refused).
 */
export async function checkoutOrganization(db: Executor, input: CheckoutCreate, writable: ReadonlySet<string>): Promise<string> {
  const productId =
    input.products?.[0] ?? input.product_id ?? (input.product_price_id ? (await db('product_prices').where({ id: input.product_price_id }).first('product_id'))?.product_id : undefined);
  const [product] = productId ? await findProductsByIds(db, [productId]) : [];
  if (product && writable.has(product.organizationId)) return product.organizationId;
  if (writable.size === 1) return [...writable][0];
  throw invalid([issue([input.products?.length ? 'products' : 'product_price_id', 0], 'Product does not exist.')]);
}

/** How a checkout link opens a checkout: another product pre-selected, and a discount that is dropped, not refused, when it does not apply. */
export interface OpeningOptions {
  /** Selects this product when it is among those offered (otherwise the first is). */
  selectProductId?: string | null;
  /** A code the customer brought (`?discount_code=`): tried before `discount_id`. */
  discountCode?: string | null;
  /** A discount (code or id) that does not apply is left out instead of refusing the checkout. */
  lenientDiscount?: boolean;
}

/** POST /v1/checkouts/: opens a checkout for the products (the first selected), expiring in 24 hours (Polar's CHECKOUT_TTL_SECONDS). */
export async function createCheckout(deps: CheckoutDeps, organizationId: string, input: CheckoutCreate, options: OpeningOptions = {}): Promise<Checkout> {
  return deps.db.transaction(async (trx) => {
    const clock = await organizationClock(trx, deps.clock, organizationId);
    const now = clock.now();
    let productIds = input.products ?? [];
    if (productIds.length === 0) {
      // The legacy forms: one product, or one price (its product).
      const priceProduct = input.product_price_id ? (await trx('product_prices').where({ id: input.product_price_id }).first('product_id'))?.product_id : undefined;
      const productId = input.product_id ?? priceProduct;
      if (!productId) throw invalid([issue(['product_price_id'], 'Price does not exist.')]);
      productIds = [productId];
    }
    const offered = await offeredProducts(trx, organizationId, productIds, input.products?.length ? 'products' : 'product_id');
    const organization = (await findOrganization(trx, organizationId))!;
    // As Polar: a customer named by id must exist; one named only by external id is linked when it exists (its
    // email, name and billing details fill the checkout in), else made on confirmation with that external id.
    const customer = input.customer_id
      ? await customerFor(trx, organizationId, input.customer_id)
      : input.external_customer_id
        ? ((await findCustomers(trx, { externalId: input.external_customer_id }, [organizationId]))[0] ?? null)
        : null;
    const first = input.product_price_id
      ? (offered.find((p) => p.prices.some((price) => price.id === input.product_price_id)) ?? offered[0])
      : (offered.find((p) => p.id === options.selectProductId) ?? offered[0]);
    if (input.product_price_id && !first.prices.some((price) => price.id === input.product_price_id)) {
      throw invalid([issue(['product_price_id'], 'Price does not exist or is archived.')]);
    }
    const stored: StoredCheckout = {
      id: newId(),
      organizationId,
      status: 'open',
      clientSecret: `polar_c_${randomBytes(24).toString('base64url')}`,
      expiresAt: new Date(now.getTime() + CHECKOUT_TTL_MS),
      successUrl: input.success_url ?? null,
      returnUrl: input.return_url ?? null,
      embedOrigin: input.embed_origin ?? null,
      productIds: offered.map((p) => p.id),
      productId: first.id,
      productPriceId: input.product_price_id ?? '',
      currency: input.currency ?? organization.settings.default_presentment_currency,
      customAmount: input.amount ?? null,
      amounts: { subtotalAmount: 0, discountAmount: 0, netAmount: 0, taxAmount: 0, totalAmount: 0 },
      discountId: null,
      discountClaimed: false,
      allowDiscountCodes: input.allow_discount_codes,
      requireBillingAddress: input.require_billing_address,
      allowTrial: input.allow_trial,
      trialInterval: input.trial_interval ?? null,
      trialIntervalCount: input.trial_interval_count ?? null,
      customerId: customer?.id ?? null,
      externalCustomerId: input.external_customer_id ?? customer?.externalId ?? null,
      customerName: input.customer_name ?? customer?.name ?? null,
      customerEmail: input.customer_email ?? customer?.email ?? null,
      customerIpAddress: input.customer_ip_address ?? null,
      customerBillingName: input.customer_billing_name ?? customer?.billingName ?? null,
      customerBillingAddress: input.customer_billing_address ?? customer?.billingAddress ?? null,
      customerTaxId: input.customer_tax_id ?? customer?.taxId?.[0] ?? null,
      isBusinessCustomer: input.is_business_customer ?? false,
      customerMetadata: input.customer_metadata ?? {},
      customFieldData: input.custom_field_data ?? {},
      metadata: input.metadata ?? {},
      locale: input.locale ?? null,
      subscriptionId: null,
      orderId: null,
      paymentId: null,
      createdAt: now,
      modifiedAt: null,
    };
    const changes: DiscountChange[] = [
      ...(options.discountCode ? [{ kind: 'code', code: options.discountCode } as const] : []),
      { kind: 'id', id: input.discount_id ?? null },
      ...(options.lenientDiscount ? [{ kind: 'id', id: null } as const] : []),
    ];
    const settled = await settleWithFirstDiscount(trx, now, stored, changes, offered);
    await insertCheckout(trx, settled);
    await scheduleJob(trx, { organizationId, kind: CHECKOUT_EXPIRY_JOB, subjectId: settled.id, runAt: settled.expiresAt });
    const view = await viewOf(trx, settled, now);
    await announceCheckout(trx, clock, deps.baseUrl, view, 'checkout.created');
    return view;
  });
}

export async function getCheckout(deps: CheckoutDeps, readable: ReadonlySet<string>, id: string): Promise<Checkout> {
  const stored = await findCheckout(deps.db, id, readable);
  if (!stored) throw checkoutNotFound();
  return viewOf(deps.db, stored, (await organizationClock(deps.db, deps.clock, stored.organizationId)).now());
}

export async function listCheckouts(deps: CheckoutDeps, filter: CheckoutFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<Checkout>> {
  const stored = await listRows(deps.db, filter, sorting, page);
  const items: Checkout[] = [];
  for (const checkout of stored.items) items.push(await viewOf(deps.db, checkout, (await organizationClock(deps.db, deps.clock, checkout.organizationId)).now()));
  return { items, totalCount: stored.totalCount };
}

/** The customer-side fields both kinds of update take, applied over the stored checkout. */
function withCustomerFields(stored: StoredCheckout, input: CheckoutUpdatePublic | CheckoutUpdate): StoredCheckout {
  const pick = <T>(value: T | null | undefined, current: T | null): T | null => (value === undefined ? current : value);
  return {
    ...stored,
    productId: input.product_id ?? stored.productId,
    productPriceId: input.product_price_id ?? (input.product_id && input.product_id !== stored.productId ? '' : stored.productPriceId),
    customAmount: input.amount === undefined ? stored.customAmount : input.amount,
    customerName: pick(input.customer_name, stored.customerName),
    customerEmail: pick(input.customer_email, stored.customerEmail),
    customerBillingName: pick(input.customer_billing_name, stored.customerBillingName),
    customerBillingAddress: pick(input.customer_billing_address, stored.customerBillingAddress),
    customerTaxId: pick(input.customer_tax_id, stored.customerTaxId),
    isBusinessCustomer: input.is_business_customer ?? stored.isBusinessCustomer,
    locale: pick(input.locale, stored.locale),
    customFieldData: input.custom_field_data ? { ...stored.customFieldData, ...input.custom_field_data } : stored.customFieldData,
  };
}

/** Writes a settled change (only if the checkout is still open) and announces checkout.updated. */
async function commitUpdate(trx: Knex.Transaction, clock: Clock, baseUrl: string, next: StoredCheckout): Promise<Checkout> {
  const now = clock.now();
  const saved = { ...next, modifiedAt: now };
  if (!(await saveCheckout(trx, saved))) throw notOpen('being confirmed');
  const view = await viewOf(trx, saved, now);
  // As Polar, after the change is applied: a refusal rolls the whole update back.
  await assertCanSubscribe(trx, view);
  await announceCheckout(trx, clock, baseUrl, view, 'checkout.updated');
  return view;
}

/** PATCH /v1/checkouts/{id}: the seller changes an open checkout. */
export async function updateCheckout(deps: CheckoutDeps, access: Access, id: string, input: CheckoutUpdate): Promise<Checkout> {
  return deps.db.transaction(async (trx) => {
    const stored = await findCheckout(trx, id, access.read, { forUpdate: true });
    if (!stored) throw checkoutNotFound();
    if (!access.write.has(stored.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this checkout but not change it');
    const clock = await organizationClock(trx, deps.clock, stored.organizationId);
    const now = clock.now();
    assertOpen(stored, now);
    const pick = <T>(value: T | null | undefined, current: T | null): T | null => (value === undefined ? current : value);
    const next: StoredCheckout = {
      ...withCustomerFields(stored, input),
      currency: input.currency ?? stored.currency,
      productPriceId: input.product_price_id ?? (input.currency && input.currency !== stored.currency ? '' : withCustomerFields(stored, input).productPriceId),
      customerIpAddress: pick(input.customer_ip_address, stored.customerIpAddress),
      customerMetadata: input.customer_metadata ?? stored.customerMetadata,
      allowDiscountCodes: input.allow_discount_codes ?? stored.allowDiscountCodes,
      requireBillingAddress: input.require_billing_address ?? stored.requireBillingAddress,
      allowTrial: input.allow_trial ?? stored.allowTrial,
      trialInterval: pick(input.trial_interval, stored.trialInterval),
      trialIntervalCount: pick(input.trial_interval_count, stored.trialIntervalCount),
      metadata: input.metadata ?? stored.metadata,
      successUrl: pick(input.success_url, stored.successUrl),
      returnUrl: pick(input.return_url, stored.returnUrl),
      embedOrigin: pick(input.embed_origin, stored.embedOrigin),
    };
    if ((next.trialInterval === null) !== (next.trialIntervalCount === null)) {
      throw invalid([issue(['trial_interval_count'], 'Give trial_interval and trial_interval_count together')]);
    }
    const offered = await offeredProducts(trx, stored.organizationId, stored.productIds, 'product_id');
    const change: DiscountChange = input.discount_id === undefined ? { kind: 'keep' } : { kind: 'id', id: input.discount_id };
    return commitUpdate(trx, clock, deps.baseUrl, await settle(trx, now, next, change, offered));
  });
}

/**
 * The checkout a client secret opens, as its hosted page and the SDK's client calls see it. `refuseExpired` answers
 * one past its expiry as Polar's client API does (410 ExpiredCheckoutError, whatever its status); the hosted page
 * shows it instead.
 */
export async function getCheckoutByClientSecret(deps: CheckoutDeps, clientSecret: string, options: { refuseExpired?: boolean } = {}): Promise<Checkout> {
  const stored = await findCheckoutByClientSecret(deps.db, clientSecret);
  if (!stored) throw checkoutNotFound();
  const now = (await organizationClock(deps.db, deps.clock, stored.organizationId)).now();
  if (options.refuseExpired && stored.expiresAt.getTime() < now.getTime()) throw expired();
  return viewOf(deps.db, stored, now);
}

/** Applies a customer's update inside a transaction that already holds the (open) checkout. */
export async function applyPublicUpdate(trx: Knex.Transaction, deps: CheckoutDeps, clock: Clock, stored: StoredCheckout, input: CheckoutUpdatePublic): Promise<Checkout> {
  const now = clock.now();
  const next: StoredCheckout = { ...withCustomerFields(stored, input), allowTrial: input.allow_trial === false ? false : stored.allowTrial };
  const offered = await offeredProducts(trx, stored.organizationId, stored.productIds, 'product_id');
  const change: DiscountChange =
    input.discount_code === undefined || input.discount_code === null ? { kind: 'keep' } : input.discount_code === '' ? { kind: 'id', id: null } : { kind: 'code', code: input.discount_code };
  const view = await commitUpdate(trx, clock, deps.baseUrl, await settle(trx, now, next, change, offered));
  // As Polar, the buyer hears of the per-customer limit as soon as the code and the address are known.
  await assertDiscountRedeemable(trx, view);
  return view;
}

/** PATCH /v1/checkouts/client/{client_secret}: the customer fills in the checkout. */
export async function updateCheckoutPublic(deps: CheckoutDeps, clientSecret: string, input: CheckoutUpdatePublic): Promise<Checkout> {
  return deps.db.transaction(async (trx) => {
    const stored = await findCheckoutByClientSecret(trx, clientSecret, { forUpdate: true });
    if (!stored) throw checkoutNotFound();
    const clock = await organizationClock(trx, deps.clock, stored.organizationId);
    assertOpen(stored, clock.now());
    return applyPublicUpdate(trx, deps, clock, stored, input);
  });
}

export { confirmCheckout } from './confirm.js';
