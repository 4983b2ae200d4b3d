import type { Executor } from '../../db/database.js';
import { findCustomers } from '../customers/repository.js';
import { findDiscount } from '../discounts/repository.js';
import { findOrganization } from '../organizations/repository.js';
import { findPrice, findProductsByIds, pricesOf } from '../products/repository.js';
import { withRelations } from '../products/relations.js';
import type { Product } from '../products/schema.js';
import { addInterval } from '../shared/time.js';
import type { Checkout, StoredCheckout } from './schema.js';

/** The trial a purchase made now would start with: the checkout's own, else the product's; none if not allowed. */
export function activeTrial(stored: Pick<StoredCheckout, 'allowTrial' | 'trialInterval' | 'trialIntervalCount'>, product: Product, now: Date) {
  if (!stored.allowTrial || product.recurringInterval === null) return { interval: null, count: null, end: null };
  const interval = stored.trialInterval ?? product.trialInterval;
  const count = stored.trialInterval ? stored.trialIntervalCount : product.trialIntervalCount;
  if (!interval || !count) return { interval: null, count: null, end: null };
  return { interval, count, end: addInterval(now, interval, count) };
}

/**
 * A checkout with what it is shown with. The products are read as they are now; the selected price is read even
 * if archived since (a paid checkout keeps showing what was bought). `now` is the organization's clock.
 */
export async function viewOf(db: Executor, stored: StoredCheckout, now: Date): Promise<Checkout> {
  const ids = [...new Set([...stored.productIds, stored.productId])];
  const stores = await findProductsByIds(db, ids);
  const products = await withRelations(db, stores);
  const byId = new Map(products.map((product) => [product.id, product]));
  const product = byId.get(stored.productId)!;
  let productPrice = product.prices.find((price) => price.id === stored.productPriceId);
  if (!productPrice) {
    const archived = (await pricesOf(db, [product.id], { archived: true })).get(product.id) ?? [];
    productPrice = archived.find((price) => price.id === stored.productPriceId) ?? (await findPrice(db, stored.productPriceId))!;
  }
  const discount = stored.discountId ? ((await findDiscount(db, stored.discountId, [stored.organizationId])) ?? null) : null;
  const organization = (await findOrganization(db, stored.organizationId))!;
  const [customer] = stored.customerId ? await findCustomers(db, { id: stored.customerId }, [stored.organizationId]) : [];
  const trial = stored.status === 'open' ? activeTrial(stored, product, now) : { interval: null, count: null, end: null };
  return {
    ...stored,
    products: stored.productIds.map((id) => byId.get(id)).filter((p): p is Product => p !== undefined),
    product,
    productPrice,
    discount,
    organization,
    customer: customer ?? null,
    trialEnd: trial.end,
    activeTrialInterval: trial.interval,
    activeTrialIntervalCount: trial.count,
  };
}
