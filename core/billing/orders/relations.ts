import type { Executor } from '../../db/database.js';
import type { Customer } from '../customers/schema.js';
import { toCustomer } from '../customers/repository.js';
import type { StoredDiscount } from '../discounts/schema.js';
import { findDiscountsByIds } from '../discounts/repository.js';
import { toSubscription } from '../subscriptions/repository.js';
import type { Subscription } from '../subscriptions/schema.js';
import { findProductsByIds } from '../products/repository.js';
import type { StoredProduct } from '../products/schema.js';
import type { StoredOrder } from './schema.js';

/**
 * What an order embeds (its customer, product, discount and subscription), read for many orders at once.
 * An order keeps pointing at what was sold: deleted customers and discounts and archived products are read too.
 */
export interface OrderRelations {
  customers: Map<string, Customer>;
  products: Map<string, StoredProduct>;
  discounts: Map<string, StoredDiscount>;
  subscriptions: Map<string, EmbeddedSubscription>;
  organizations: Map<string, { id: string; name: string; slug: string }>;
}

/** The subscription an order embeds (Polar's OrderSubscription: the serializer picks its fields). */
export type EmbeddedSubscription = Subscription;

const unique = (values: (string | null)[]) => [...new Set(values.filter((v): v is string => v !== null))];

export async function loadRelations(db: Executor, orders: readonly StoredOrder[]): Promise<OrderRelations> {
  const customerIds = unique(orders.map((o) => o.customerId));
  const productIds = unique(orders.map((o) => o.productId));
  const discountIds = unique(orders.map((o) => o.discountId));
  const subscriptionIds = unique(orders.map((o) => o.subscriptionId));
  const organizationIds = unique(orders.map((o) => o.organizationId));
  const customersOf = async () => (customerIds.length ? await db('customers').whereIn('id', customerIds) : []);
  const productsOf = async () => (productIds.length ? await findProductsByIds(db, productIds) : []);
  const discountsOf = () => findDiscountsByIds(db, discountIds);
  const subscriptionsOf = async () => (subscriptionIds.length ? await db('subscriptions').whereIn('id', subscriptionIds) : []);
  const organizationsOf = async () => (organizationIds.length ? await db('organization').whereIn('id', organizationIds).select('id', 'name', 'slug') : []);
  // A transaction is one connection: its queries go one after another (pg refuses a query while another runs on the
  // same client, and will throw from pg 9); on the pool they run side by side.
  const [customers, products, discounts, subscriptions, organizations] =
    'isTransaction' in db && db.isTransaction
      ? [await customersOf(), await productsOf(), await discountsOf(), await subscriptionsOf(), await organizationsOf()]
      : await Promise.all([customersOf(), productsOf(), discountsOf(), subscriptionsOf(), organizationsOf()]);
  return {
    customers: new Map(customers.map((row: Record<string, unknown>) => [String(row.id), toCustomer(row)])),
    products: new Map(products.map((p) => [p.id, p])),
    discounts: new Map(discounts.map((d) => [d.id, d])),
    subscriptions: new Map(subscriptions.map((row: Record<string, unknown>) => [String(row.id), toSubscription(row, [])])),
    organizations: new Map(organizations.map((row: { id: string; name: string; slug: string }) => [row.id, { id: row.id, name: row.name, slug: row.slug }])),
  };
}
