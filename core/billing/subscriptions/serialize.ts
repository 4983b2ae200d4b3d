import { serializeCustomer } from '../customers/serialize.js';
import { serializeDiscount } from '../discounts/serialize.js';
import { serializePrice, serializeProduct } from '../products/serialize.js';
import type { SubscriptionView } from './relations.js';

const iso = (date: Date | null) => date?.toISOString() ?? null;

/**
 * Polar's Subscription (the one place its wire shape is written). Till has no seats, pauses or pending updates
 * on subscriptions: those fields are answered empty, as Polar answers them for a plain subscription.
 */
export function serializeSubscription(view: SubscriptionView, baseUrl: string) {
  const { subscription: s, customer, product, discount, prices, meters } = view;
  let discountWire = null;
  if (discount) {
    const { products: _products, ...base } = serializeDiscount({ ...discount, products: [] });
    discountWire = base;
  }
  return {
    created_at: s.createdAt.toISOString(),
    modified_at: iso(s.modifiedAt),
    id: s.id,
    amount: s.amount,
    currency: s.currency,
    recurring_interval: s.recurringInterval,
    recurring_interval_count: s.recurringIntervalCount,
    status: s.status,
    current_period_start: s.currentPeriodStart.toISOString(),
    current_period_end: s.currentPeriodEnd.toISOString(),
    current_meter_period_start: null,
    current_meter_period_end: null,
    trial_start: iso(s.trialStart),
    trial_end: iso(s.trialEnd),
    cancel_at_period_end: s.cancelAtPeriodEnd,
    canceled_at: iso(s.canceledAt),
    started_at: iso(s.startedAt),
    ends_at: iso(s.endsAt),
    ended_at: iso(s.endedAt),
    past_due_at: iso(s.pastDueAt),
    pause_at_period_end: false,
    paused_at: null,
    resumes_at: null,
    customer_id: s.customerId,
    product_id: s.productId,
    discount_id: discountWire ? s.discountId : null,
    checkout_id: s.checkoutId,
    seats: null,
    // Unit-based pricing is not offered: no subscription counts units.
    units: null,
    customer_cancellation_reason: s.customerCancellationReason,
    customer_cancellation_comment: s.customerCancellationComment,
    metadata: s.metadata,
    custom_field_data: s.customFieldData,
    customer: serializeCustomer(customer),
    product: serializeProduct(product, baseUrl),
    discount: discountWire,
    prices: prices.map((price) => serializePrice(price, product)),
    meters,
    pending_update: null,
  };
}
export type SubscriptionWire = ReturnType<typeof serializeSubscription>;
