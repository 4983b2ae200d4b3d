import type { Executor } from '../../db/database.js';
import type { Customer } from '../customers/schema.js';
import { findDiscount } from '../discounts/repository.js';
import type { StoredDiscount } from '../discounts/schema.js';
import { findProductsByIds, pricesOf } from '../products/repository.js';
import { withRelations } from '../products/relations.js';
import type { Price, Product } from '../products/schema.js';
import { customersOfSubscriptions } from './repository.js';
import type { Subscription } from './schema.js';
import { subscriptionMeters } from '../../metering/billing.js';

/** A subscription with what it embeds on the wire: its customer, product, discount and prices. */
export interface SubscriptionView {
  subscription: Subscription;
  customer: Customer;
  product: Product;
  discount: StoredDiscount | null;
  prices: Price[];
  /** Consumption of each metered price in the current period (Polar's subscription `meters`), wire-ready. */
  meters: Awaited<ReturnType<typeof subscriptionMeters>>;
}

/**
 * Loads what each subscription embeds, one query per relation (a transaction's connection runs one query at a
 * time). Prices are read archived or not: a subscription keeps the prices it was sold at.
 */
export async function viewsOf(db: Executor, subscriptions: readonly Subscription[]): Promise<SubscriptionView[]> {
  if (subscriptions.length === 0) return [];
  const productIds = [...new Set(subscriptions.map((s) => s.productId))];
  const products = new Map((await withRelations(db, await findProductsByIds(db, productIds))).map((p) => [p.id, p]));
  const prices = await pricesOf(db, [...new Set([...productIds, ...(await productIdsOfPrices(db, subscriptions))])], { archived: true });
  const priceById = new Map([...prices.values()].flat().map((price) => [price.id, price]));
  const customers = await customersOfSubscriptions(db, subscriptions.map((s) => s.customerId));
  const discounts = new Map<string, StoredDiscount | undefined>();
  for (const s of subscriptions) {
    if (s.discountId && !discounts.has(s.discountId)) discounts.set(s.discountId, await findDiscount(db, s.discountId, [s.organizationId]));
  }
  const meters = new Map<string, SubscriptionView['meters']>();
  for (const s of subscriptions) {
    // Only subscriptions with a metered price have meters; the others skip the query.
    if (!s.priceIds.some((id) => priceById.get(id)?.amountType === 'metered_unit')) continue;
    meters.set(s.id, await subscriptionMeters(db, { subscriptionId: s.id, periodStart: s.currentPeriodStart, periodEnd: s.currentPeriodEnd }));
  }
  return subscriptions.map((subscription) => {
    const customer = customers.get(subscription.customerId);
    const product = products.get(subscription.productId);
    if (!customer || !product) throw new Error(`Subscription ${subscription.id} lost its customer or product`);
    return {
      subscription,
      customer,
      product,
      // A discount deleted since it was applied is no longer shown, nor applied to renewals.
      discount: (subscription.discountId && discounts.get(subscription.discountId)) || null,
      prices: subscription.priceIds.map((id) => priceById.get(id)).filter((p): p is Price => p !== undefined),
      meters: meters.get(subscription.id) ?? [],
    };
  });
}

/** Products of the subscriptions' prices (a price may belong to the product a subscription changed from). */
async function productIdsOfPrices(db: Executor, subscriptions: readonly Subscription[]): Promise<string[]> {
  const ids = subscriptions.flatMap((s) => s.priceIds);
  if (ids.length === 0) return [];
  const rows = await db('product_prices').whereIn('id', [...new Set(ids)]).distinct('product_id');
  return rows.map((row) => String(row.product_id));
}
