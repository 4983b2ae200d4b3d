import { serializeCustomer } from '../customers/serialize.js';
import { serializeProductBase } from '../products/serialize.js';
import type { StoredDiscount } from '../discounts/schema.js';
import { serializeDiscountTerms } from '../discounts/serialize.js';
import type { EmbeddedSubscription, OrderRelations } from './relations.js';
import { refundableAmount, refundableTaxAmount, type StoredOrder } from './schema.js';

const iso = (date: Date | null) => date?.toISOString() ?? null;

const serializeAddress = (address: NonNullable<StoredOrder['billingAddress']>) => ({
  line1: address.line1 ?? null,
  line2: address.line2 ?? null,
  postal_code: address.postal_code ?? null,
  city: address.city ?? null,
  state: address.state ?? null,
  country: address.country,
});

/** Polar's Discount*Base: the discount without the products it is restricted to. */
function serializeDiscountBase(discount: StoredDiscount) {
  return {
    id: discount.id,
    created_at: discount.createdAt.toISOString(),
    modified_at: iso(discount.modifiedAt),
    metadata: discount.metadata,
    name: discount.name,
    code: discount.code,
    type: discount.type,
    duration: discount.duration,
    ...(discount.duration === 'repeating' ? { duration_in_months: discount.durationInMonths } : {}),
    ...serializeDiscountTerms(discount),
    starts_at: iso(discount.startsAt),
    ends_at: iso(discount.endsAt),
    max_redemptions: discount.maxRedemptions,
    redemptions_count: discount.redemptionsCount,
    organization_id: discount.organizationId,
  };
}

/** Polar's OrderSubscription. */
function serializeSubscription(subscription: EmbeddedSubscription) {
  return {
    metadata: subscription.metadata,
    created_at: subscription.createdAt.toISOString(),
    modified_at: iso(subscription.modifiedAt),
    id: subscription.id,
    amount: subscription.amount,
    currency: subscription.currency,
    recurring_interval: subscription.recurringInterval,
    recurring_interval_count: subscription.recurringIntervalCount,
    status: subscription.status,
    current_period_start: subscription.currentPeriodStart.toISOString(),
    current_period_end: subscription.currentPeriodEnd.toISOString(),
    current_meter_period_start: null,
    current_meter_period_end: null,
    trial_start: iso(subscription.trialStart),
    trial_end: iso(subscription.trialEnd),
    cancel_at_period_end: subscription.cancelAtPeriodEnd,
    canceled_at: iso(subscription.canceledAt),
    started_at: iso(subscription.startedAt),
    ends_at: iso(subscription.endsAt),
    ended_at: iso(subscription.endedAt),
    past_due_at: iso(subscription.pastDueAt),
    pause_at_period_end: false,
    paused_at: null,
    resumes_at: null,
    customer_id: subscription.customerId,
    product_id: subscription.productId,
    discount_id: subscription.discountId,
    checkout_id: subscription.checkoutId,
    units: null,
    customer_cancellation_reason: subscription.customerCancellationReason,
    customer_cancellation_comment: subscription.customerCancellationComment,
    // Polar's deprecated user_id (its customers' legacy user, the customer's own id for every customer Till has),
    // still sent though outside its OpenAPI documents: SDK 0.32 (pinned by @polar-sh/express) requires it.
    user_id: subscription.customerId,
  };
}

/** What an order is for, in a line: the product's name, else its first item's label. */
export function orderDescription(order: StoredOrder, relations: OrderRelations): string {
  const product = order.productId ? relations.products.get(order.productId) : undefined;
  return product?.name ?? order.items[0]?.label ?? 'Order';
}

/** The Order of Polar's API (the one place its wire shape is written). */
export function serializeOrder(order: StoredOrder, relations: OrderRelations) {
  const customer = relations.customers.get(order.customerId);
  if (!customer) throw new Error(`order ${order.id}: customer ${order.customerId} is missing`);
  const product = order.productId ? relations.products.get(order.productId) : undefined;
  const discount = order.discountId ? relations.discounts.get(order.discountId) : undefined;
  const subscription = order.subscriptionId ? relations.subscriptions.get(order.subscriptionId) : undefined;
  const paid = order.status !== 'pending';
  return {
    id: order.id,
    created_at: order.createdAt.toISOString(),
    modified_at: iso(order.modifiedAt),
    status: order.status,
    paid,
    subtotal_amount: order.subtotalAmount,
    discount_amount: order.discountAmount,
    net_amount: order.netAmount,
    tax_amount: order.taxAmount,
    total_amount: order.totalAmount,
    applied_balance_amount: order.appliedBalanceAmount,
    due_amount: paid ? 0 : Math.max(0, order.totalAmount + order.appliedBalanceAmount),
    refunded_amount: order.refundedAmount,
    refunded_tax_amount: order.refundedTaxAmount,
    currency: order.currency,
    billing_reason: order.billingReason,
    billing_name: order.billingName,
    billing_address: order.billingAddress ? serializeAddress(order.billingAddress) : null,
    invoice_number: order.invoiceNumber,
    is_invoice_generated: order.isInvoiceGenerated,
    receipt_number: null,
    seats: null,
    units: null,
    customer_id: order.customerId,
    product_id: order.productId,
    discount_id: order.discountId,
    subscription_id: order.subscriptionId,
    checkout_id: order.checkoutId,
    next_payment_attempt_at: null,
    metadata: order.metadata,
    custom_field_data: order.customFieldData,
    platform_fee_amount: order.platformFeeAmount,
    platform_fee_currency: null,
    customer: serializeCustomer(customer),
    product: product ? serializeProductBase(product) : null,
    discount: discount ? serializeDiscountBase(discount) : null,
    subscription: subscription ? serializeSubscription(subscription) : null,
    items: order.items.map((item) => ({
      created_at: item.createdAt.toISOString(),
      modified_at: iso(item.modifiedAt),
      id: item.id,
      label: item.label,
      amount: item.amount,
      tax_amount: item.taxAmount,
      proration: item.proration,
      // Till does not record the period a line covers.
      start_timestamp: null,
      end_timestamp: null,
      product_price_id: item.productPriceId,
    })),
    description: orderDescription(order, relations),
    refundable_amount: REFUNDABLE(order) ? refundableAmount(order) : 0,
    refundable_tax_amount: REFUNDABLE(order) ? refundableTaxAmount(order) : 0,
    // Polar's deprecated fields, still sent though left out of its OpenAPI documents: clients on older SDKs
    // (0.32, pinned by @polar-sh/express and the other framework adapters) require them.
    amount: order.netAmount,
    from_balance_amount: order.appliedBalanceAmount,
    user_id: order.customerId,
    user: { id: order.customerId, email: customer.email, public_name: (customer.name || customer.email || '?').slice(0, 1), avatar_url: null, github_username: null },
  };
}
export type OrderWire = ReturnType<typeof serializeOrder>;

const REFUNDABLE = (order: StoredOrder) => order.status === 'paid' || order.status === 'partially_refunded';
