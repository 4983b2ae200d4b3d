import type { Executor } from '../../db/database.js';
import { dialectOf } from '../../db/database.js';
import { fromDbBool, fromDbInt, fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { Address } from '../customers/address.js';
import type { Metadata } from '../shared/metadata.js';
import type { Interval } from '../products/schema.js';
import { canTransition } from './state.js';
import { checkoutScope, trackMetrics } from '../../metrics/rollups.js';
import type { CheckoutStatus, CustomFieldValue, StoredCheckout } from './schema.js';

const TABLE = 'checkouts';

function toCheckout(row: Record<string, unknown>): StoredCheckout {
  const nullableText = (value: unknown) => (value === null || value === undefined ? null : String(value));
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    status: row.status as CheckoutStatus,
    clientSecret: String(row.client_secret),
    expiresAt: fromDbTime(row.expires_at),
    successUrl: nullableText(row.success_url),
    returnUrl: nullableText(row.return_url),
    embedOrigin: nullableText(row.embed_origin),
    productIds: fromDbJson<string[]>(row.product_ids),
    productId: String(row.product_id),
    productPriceId: String(row.product_price_id),
    currency: String(row.currency),
    customAmount: row.custom_amount === null ? null : fromDbInt(row.custom_amount),
    amounts: {
      subtotalAmount: fromDbInt(row.amount),
      discountAmount: fromDbInt(row.discount_amount),
      netAmount: fromDbInt(row.net_amount),
      taxAmount: fromDbInt(row.tax_amount),
      totalAmount: fromDbInt(row.total_amount),
    },
    discountId: nullableText(row.discount_id),
    discountClaimed: fromDbBool(row.discount_claimed),
    allowDiscountCodes: fromDbBool(row.allow_discount_codes),
    requireBillingAddress: fromDbBool(row.require_billing_address),
    allowTrial: fromDbBool(row.allow_trial),
    trialInterval: (row.trial_interval as Interval | null) ?? null,
    trialIntervalCount: row.trial_interval_count === null ? null : fromDbInt(row.trial_interval_count),
    customerId: nullableText(row.customer_id),
    externalCustomerId: nullableText(row.external_customer_id),
    customerName: nullableText(row.customer_name),
    customerEmail: nullableText(row.customer_email),
    customerIpAddress: nullableText(row.customer_ip_address),
    customerBillingName: nullableText(row.customer_billing_name),
    customerBillingAddress: row.customer_billing_address === null ? null : fromDbJson<Address>(row.customer_billing_address),
    customerTaxId: nullableText(row.customer_tax_id),
    isBusinessCustomer: fromDbBool(row.is_business_customer),
    customerMetadata: fromDbJson<Record<string, string | number | boolean>>(row.customer_metadata),
    customFieldData: fromDbJson<Record<string, CustomFieldValue>>(row.custom_field_data),
    metadata: fromDbJson<Metadata>(row.metadata),
    locale: nullableText(row.locale),
    subscriptionId: nullableText(row.subscription_id),
    orderId: nullableText(row.order_id),
    paymentId: nullableText(row.payment_id),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

/** The columns an update may write (everything but identity, status and creation). */
function toRow(checkout: StoredCheckout) {
  return {
    expires_at: toDbTime(checkout.expiresAt),
    success_url: checkout.successUrl,
    return_url: checkout.returnUrl,
    embed_origin: checkout.embedOrigin,
    product_ids: toDbJson(checkout.productIds),
    product_id: checkout.productId,
    product_price_id: checkout.productPriceId,
    currency: checkout.currency,
    custom_amount: checkout.customAmount,
    amount: checkout.amounts.subtotalAmount,
    discount_amount: checkout.amounts.discountAmount,
    net_amount: checkout.amounts.netAmount,
    tax_amount: checkout.amounts.taxAmount,
    total_amount: checkout.amounts.totalAmount,
    discount_id: checkout.discountId,
    allow_discount_codes: checkout.allowDiscountCodes,
    require_billing_address: checkout.requireBillingAddress,
    allow_trial: checkout.allowTrial,
    trial_interval: checkout.trialInterval,
    trial_interval_count: checkout.trialIntervalCount,
    customer_id: checkout.customerId,
    external_customer_id: checkout.externalCustomerId,
    customer_name: checkout.customerName,
    customer_email: checkout.customerEmail,
    customer_ip_address: checkout.customerIpAddress,
    customer_billing_name: checkout.customerBillingName,
    customer_billing_address: checkout.customerBillingAddress ? toDbJson(checkout.customerBillingAddress) : null,
    customer_tax_id: checkout.customerTaxId,
    is_business_customer: checkout.isBusinessCustomer,
    customer_metadata: toDbJson(checkout.customerMetadata),
    custom_field_data: toDbJson(checkout.customFieldData),
    metadata: toDbJson(checkout.metadata),
    locale: checkout.locale,
    subscription_id: checkout.subscriptionId,
    order_id: checkout.orderId,
    payment_id: checkout.paymentId,
    modified_at: toDbTimeOrNull(checkout.modifiedAt),
  };
}

export async function insertCheckout(trx: Executor, checkout: StoredCheckout): Promise<void> {
  await trackMetrics(trx, checkoutScope(checkout.id), () => insertCheckoutRow(trx, checkout));
}

async function insertCheckoutRow(trx: Executor, checkout: StoredCheckout): Promise<void> {
  await trx(TABLE).insert({
    ...toRow(checkout),
    id: checkout.id,
    organization_id: checkout.organizationId,
    status: checkout.status,
    client_secret: checkout.clientSecret,
    discount_claimed: checkout.discountClaimed,
    created_at: toDbTime(checkout.createdAt),
  });
}

/**
 * Writes a checkout's fields only while it is still in `status` (the status the caller read): false when a
 * concurrent confirmation or expiry changed it first, so an update never lands on a paid checkout.
 */
export async function saveCheckout(trx: Executor, checkout: StoredCheckout): Promise<boolean> {
  const count = await trackMetrics(trx, checkoutScope(checkout.id), () => trx(TABLE).where({ id: checkout.id, status: checkout.status }).update(toRow(checkout)));
  return count > 0;
}

/**
 * Moves a checkout from one status to another (a transition of the table in state.ts) with one guarded UPDATE:
 * of two concurrent confirmations, exactly one moves it. `changes` are written along with the status.
 */
export async function transitionCheckout(
  trx: Executor,
  id: string,
  from: CheckoutStatus,
  to: CheckoutStatus,
  changes: { modifiedAt: Date; discountClaimed?: boolean; customerId?: string; subscriptionId?: string | null; orderId?: string | null; paymentId?: string | null },
  /** Also require the checkout still to charge this (what the caller priced is what is stored). */
  priced?: { totalAmount: number; currency: string; productPriceId: string; discountId: string | null },
): Promise<boolean> {
  if (!canTransition(from, to)) throw new Error(`checkout transition ${from} → ${to} is not in the table`);
  const query = trx(TABLE).where({ id, status: from });
  if (priced) {
    query.where({ total_amount: priced.totalAmount, currency: priced.currency, product_price_id: priced.productPriceId });
    if (priced.discountId) query.where({ discount_id: priced.discountId });
    else query.whereNull('discount_id');
  }
  const changed = {
    status: to,
    modified_at: toDbTime(changes.modifiedAt),
    ...(changes.discountClaimed !== undefined ? { discount_claimed: changes.discountClaimed } : {}),
    ...(changes.customerId !== undefined ? { customer_id: changes.customerId } : {}),
    ...(changes.subscriptionId !== undefined ? { subscription_id: changes.subscriptionId } : {}),
    ...(changes.orderId !== undefined ? { order_id: changes.orderId } : {}),
    ...(changes.paymentId !== undefined ? { payment_id: changes.paymentId } : {}),
  };
  const count = await trackMetrics(trx, checkoutScope(id), () => query.update(changed));
  return count > 0;
}

export async function findCheckout(db: Executor, id: string, organizationIds: Iterable<string>, options: { forUpdate?: boolean } = {}): Promise<StoredCheckout | undefined> {
  const query = db(TABLE).where({ id }).whereIn('organization_id', [...organizationIds]).first();
  if (options.forUpdate && dialectOf(db) === 'postgres') query.forUpdate();
  const row = await query;
  return row ? toCheckout(row) : undefined;
}

export async function findCheckoutById(db: Executor, id: string): Promise<StoredCheckout | undefined> {
  const row = await db(TABLE).where({ id }).first();
  return row ? toCheckout(row) : undefined;
}

export async function findCheckoutByClientSecret(db: Executor, clientSecret: string, options: { forUpdate?: boolean } = {}): Promise<StoredCheckout | undefined> {
  const query = db(TABLE).where({ client_secret: clientSecret }).first();
  if (options.forUpdate && dialectOf(db) === 'postgres') query.forUpdate();
  const row = await query;
  return row ? toCheckout(row) : undefined;
}

export interface CheckoutFilter {
  organizationIds: readonly string[];
  productIds?: readonly string[];
  customerIds?: readonly string[];
  externalCustomerIds?: readonly string[];
  statuses?: readonly CheckoutStatus[];
  /** A substring of the customer's email or name, case-insensitive. */
  query?: string;
}

const SORT_COLUMNS: Record<string, string> = { created_at: 'created_at', expires_at: 'expires_at', status: 'status' };

export async function listCheckouts(db: Executor, filter: CheckoutFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<StoredCheckout>> {
  const scoped = () => {
    const query = db(TABLE).whereIn('organization_id', filter.organizationIds);
    if (filter.productIds) query.whereIn('product_id', filter.productIds);
    if (filter.customerIds) query.whereIn('customer_id', filter.customerIds);
    if (filter.externalCustomerIds) query.whereIn('external_customer_id', filter.externalCustomerIds);
    if (filter.statuses) query.whereIn('status', filter.statuses);
    if (filter.query) {
      const pattern = `%${filter.query.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query.andWhere((q) => q.whereRaw("lower(customer_email) like ? escape '\\'", [pattern]).orWhereRaw("lower(customer_name) like ? escape '\\'", [pattern]));
    }
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped();
  for (const { column, order } of sorting) if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
  const rows = await query.orderBy('id').limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toCheckout), totalCount: Number(count) };
}

/** Records that a checkout started a trial (Polar's TrialRedemption), under the customer's comparable address. */
export async function insertTrialRedemption(trx: Executor, redemption: { id: string; organizationId: string; customerId: string; customerEmail: string; productId: string; createdAt: Date }): Promise<void> {
  await trx('trial_redemptions').insert({
    id: redemption.id,
    organization_id: redemption.organizationId,
    customer_id: redemption.customerId,
    customer_email: redemption.customerEmail,
    product_id: redemption.productId,
    created_at: toDbTime(redemption.createdAt),
  });
}

/** Whether anyone with this comparable address took a trial in the organization before (any product, as Polar checks). */
/**
 * Whether another checkout of a recurring product in the organization is confirmed for this customer (by id, else by
 * email in any case) and waits on its payment (3-D Secure, the bank): paid, it becomes a subscription, so it counts
 * as one for allow_multiple_subscriptions.
 */
export async function hasSubscriptionCheckoutInFlight(db: Executor, organizationId: string, exceptCheckoutId: string, who: { customerId: string | null; email: string | null }): Promise<boolean> {
  const query = db(TABLE)
    .join('products', 'products.id', `${TABLE}.product_id`)
    .where({ [`${TABLE}.organization_id`]: organizationId, [`${TABLE}.status`]: 'confirmed' })
    .whereNot(`${TABLE}.id`, exceptCheckoutId)
    .whereNotNull('products.recurring_interval');
  if (who.customerId) query.where(`${TABLE}.customer_id`, who.customerId);
  else if (who.email) query.whereRaw(`lower(${TABLE}.customer_email) = ?`, [who.email.toLowerCase()]);
  else return false;
  return (await query.first(`${TABLE}.id`)) !== undefined;
}

export async function trialRedeemedBy(db: Executor, organizationId: string, customerEmail: string): Promise<boolean> {
  return (await db('trial_redemptions').where({ organization_id: organizationId, customer_email: customerEmail }).first('id')) !== undefined;
}

/**
 * The other checkouts that hold a redemption of the discount (confirmed or paid with it) for this customer id or for
 * an address at this domain (the caller compares the addresses exactly): Polar's redemptions of one customer.
 */
export async function discountRedemptionsNear(db: Executor, discountId: string, exceptCheckoutId: string, who: { customerId: string | null; emailDomain: string | null }): Promise<{ customerId: string | null; customerEmail: string | null }[]> {
  if (!who.customerId && !who.emailDomain) return [];
  const rows = await db(TABLE)
    .where({ discount_id: discountId, discount_claimed: true })
    .whereNot('id', exceptCheckoutId)
    .andWhere((q) => {
      if (who.customerId) q.orWhere('customer_id', who.customerId);
      if (who.emailDomain) q.orWhereRaw('lower(customer_email) like ?', [`%@${who.emailDomain.toLowerCase()}`]);
    })
    .select('customer_id', 'customer_email');
  return rows.map((row) => ({ customerId: (row.customer_id as string | null) ?? null, customerEmail: (row.customer_email as string | null) ?? null }));
}
