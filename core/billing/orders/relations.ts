import { fromDbBool, fromDbInt, fromDbJson, fromDbTime, fromDbTimeOrNull } from '../../db/columns.js';
import type { Executor } from '../../db/database.js';
import type { Customer } from '../customers/schema.js';
import { toCustomer } from '../customers/repository.js';
import type { StoredDiscount } from '../discounts/schema.js';
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

/** The subscription fields an order embeds (Polar's OrderSubscription). */
export interface EmbeddedSubscription {
  id: string;
  amount: number;
  currency: string;
  recurringInterval: string;
  recurringIntervalCount: number;
  status: string;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  trialStart: Date | null;
  trialEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  canceledAt: Date | null;
  startedAt: Date | null;
  endsAt: Date | null;
  endedAt: Date | null;
  pastDueAt: Date | null;
  customerId: string;
  productId: string;
  discountId: string | null;
  checkoutId: string | null;
  customerCancellationReason: string | null;
  customerCancellationComment: string | null;
  metadata: Record<string, string | number | boolean>;
  createdAt: Date;
  modifiedAt: Date | null;
}

const unique = (values: (string | null)[]) => [...new Set(values.filter((v): v is string => v !== null))];
const intOrNull = (value: unknown) => (value === null || value === undefined ? null : fromDbInt(value));

function toDiscount(row: Record<string, unknown>): StoredDiscount {
  const common = {
    id: String(row.id),
    organizationId: String(row.organization_id),
    name: String(row.name),
    code: (row.code as string | null) ?? null,
    duration: row.duration as StoredDiscount['duration'],
    durationInMonths: intOrNull(row.duration_in_months),
    startsAt: fromDbTimeOrNull(row.starts_at),
    endsAt: fromDbTimeOrNull(row.ends_at),
    maxRedemptions: intOrNull(row.max_redemptions),
    redemptionsCount: fromDbInt(row.redemptions_count),
    metadata: fromDbJson<StoredDiscount['metadata']>(row.metadata),
    productIds: [],
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
  return row.type === 'fixed'
    ? { ...common, type: 'fixed', amount: fromDbInt(row.amount), currency: String(row.currency) }
    : { ...common, type: 'percentage', basisPoints: fromDbInt(row.basis_points) };
}

function toSubscription(row: Record<string, unknown>): EmbeddedSubscription {
  return {
    id: String(row.id),
    amount: fromDbInt(row.amount),
    currency: String(row.currency),
    recurringInterval: String(row.recurring_interval),
    recurringIntervalCount: fromDbInt(row.recurring_interval_count),
    status: String(row.status),
    currentPeriodStart: fromDbTime(row.current_period_start),
    currentPeriodEnd: fromDbTime(row.current_period_end),
    trialStart: fromDbTimeOrNull(row.trial_start),
    trialEnd: fromDbTimeOrNull(row.trial_end),
    cancelAtPeriodEnd: fromDbBool(row.cancel_at_period_end),
    canceledAt: fromDbTimeOrNull(row.canceled_at),
    startedAt: fromDbTimeOrNull(row.started_at),
    endsAt: fromDbTimeOrNull(row.ends_at),
    endedAt: fromDbTimeOrNull(row.ended_at),
    pastDueAt: fromDbTimeOrNull(row.past_due_at),
    customerId: String(row.customer_id),
    productId: String(row.product_id),
    discountId: (row.discount_id as string | null) ?? null,
    checkoutId: (row.checkout_id as string | null) ?? null,
    customerCancellationReason: (row.customer_cancellation_reason as string | null) ?? null,
    customerCancellationComment: (row.customer_cancellation_comment as string | null) ?? null,
    metadata: row.metadata === null || row.metadata === undefined ? {} : fromDbJson(row.metadata),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

export async function loadRelations(db: Executor, orders: readonly StoredOrder[]): Promise<OrderRelations> {
  const customerIds = unique(orders.map((o) => o.customerId));
  const productIds = unique(orders.map((o) => o.productId));
  const discountIds = unique(orders.map((o) => o.discountId));
  const subscriptionIds = unique(orders.map((o) => o.subscriptionId));
  const organizationIds = unique(orders.map((o) => o.organizationId));
  const [customers, products, discounts, subscriptions, organizations] = await Promise.all([
    customerIds.length ? db('customers').whereIn('id', customerIds) : [],
    productIds.length ? findProductsByIds(db, productIds) : [],
    discountIds.length ? db('discounts').whereIn('id', discountIds) : [],
    subscriptionIds.length ? db('subscriptions').whereIn('id', subscriptionIds) : [],
    organizationIds.length ? db('organization').whereIn('id', organizationIds).select('id', 'name', 'slug') : [],
  ]);
  return {
    customers: new Map(customers.map((row: Record<string, unknown>) => [String(row.id), toCustomer(row)])),
    products: new Map(products.map((p) => [p.id, p])),
    discounts: new Map(discounts.map((row: Record<string, unknown>) => [String(row.id), toDiscount(row)])),
    subscriptions: new Map(subscriptions.map((row: Record<string, unknown>) => [String(row.id), toSubscription(row)])),
    organizations: new Map(organizations.map((row: { id: string; name: string; slug: string }) => [row.id, { id: row.id, name: row.name, slug: row.slug }])),
  };
}
