import { formatMoney } from './money.js';
import type { CheckoutWire, DiscountWire, PriceWire, ProductWire } from './types.js';

/** "month", "3 months": how often a recurring product bills. */
export function intervalText(interval: string, count: number | null | undefined): string {
  const n = count ?? 1;
  return n === 1 ? interval : `${n} ${interval}s`;
}

/** " / month", " every 3 months", or nothing for a one-time product. */
export function recurrenceSuffix(product: ProductWire | null): string {
  if (!product?.recurring_interval) return '';
  const count = product.recurring_interval_count ?? 1;
  return count === 1 ? ` / ${product.recurring_interval}` : ` every ${intervalText(product.recurring_interval, count)}`;
}

/** A price as the product list shows it: "$12.00 / month", "Pay what you want (from $5.00)", "Free". */
export function priceText(price: PriceWire | null, product: ProductWire | null): string {
  if (!price) return '';
  const suffix = recurrenceSuffix(product);
  switch (price.amount_type) {
    case 'fixed':
      return price.price_amount ? `${formatMoney(price.price_amount, price.price_currency)}${suffix}` : 'Free';
    case 'free':
      return 'Free';
    case 'custom': {
      const min = price.minimum_amount ?? 0;
      return min > 0 ? `Pay what you want (from ${formatMoney(min, price.price_currency)})${suffix}` : `Pay what you want${suffix}`;
    }
    default:
      return `Priced by ${price.amount_type.replace(/_/g, ' ')}`;
  }
}

/** "20% off", "$5.00 off", with how long it lasts for a subscription. */
export function discountText(discount: DiscountWire, recurring: boolean): string {
  const off = discount.type === 'percentage' ? `${(discount.basis_points ?? 0) / 100}% off` : `${formatMoney(discount.amount ?? 0, discount.currency ?? 'usd')} off`;
  if (!recurring || discount.duration === 'once') return recurring ? `${off} the first payment` : off;
  if (discount.duration === 'forever') return `${off} every payment`;
  const months = discount.duration_in_months ?? 1;
  return `${off} for ${months} month${months === 1 ? '' : 's'}`;
}

/** The prices a product offers in the checkout's currency, active ones only. */
export function activePrice(product: ProductWire, currency: string): PriceWire | null {
  return product.prices.find((price) => !price.is_archived && price.price_currency === currency) ?? product.prices.find((price) => !price.is_archived) ?? null;
}

/** A trial the subscription starts with, as "14 days", or null. */
export function trialText(checkout: CheckoutWire): string | null {
  const interval = checkout.active_trial_interval;
  const count = checkout.active_trial_interval_count;
  if (!interval || !count) return null;
  return `${count} ${interval}${count === 1 ? '' : 's'}`;
}

/**
 * What a subscription costs after today when its discount does not last (once, or for some months): the checkout's
 * total is only the first payment then. `total` is a renewal at the full price, tax included when known.
 */
export interface Renewal {
  total: number;
  /** False while no billing country is known: the renewal is shown before tax, as today's total is. */
  taxKnown: boolean;
}

/** A discount on a subscription that ends: today's total is not what every renewal costs. */
export function discountEnds(checkout: CheckoutWire): boolean {
  const discount = checkout.discount;
  return Boolean(checkout.product?.is_recurring && discount && discount.duration !== 'forever' && checkout.discount_amount > 0);
}

/** "Then $12.00 / month", "$9.00 / month for the first 3 months, then $12.00 / month": the renewals of a discount that ends. */
export function renewalText(checkout: CheckoutWire, renewal: Renewal): string {
  const suffix = recurrenceSuffix(checkout.product);
  const full = `${formatMoney(renewal.total, checkout.currency)}${suffix}${renewal.taxKnown ? '' : ' before tax'}`;
  const discount = checkout.discount;
  if (discount?.duration !== 'repeating') return full;
  const months = discount.duration_in_months ?? 1;
  return `${formatMoney(checkout.total_amount, checkout.currency)}${suffix} until ${months} month${months === 1 ? '' : 's'} after you subscribe, then ${full}`;
}

/** The pay button says what pressing it does: pay an amount, subscribe, start a trial or take a free product. */
export function payLabel(checkout: CheckoutWire): string {
  const recurring = checkout.product?.is_recurring ?? false;
  if (recurring && trialText(checkout)) return 'Start trial';
  if (!checkout.is_payment_required) return recurring ? 'Subscribe' : 'Get it free';
  const total = formatMoney(checkout.total_amount, checkout.currency);
  if (discountEnds(checkout)) return `Subscribe, pay ${total} today`;
  return recurring ? `Subscribe for ${total}` : `Pay ${total}`;
}

/** The success URL with Polar's `{CHECKOUT_ID}` placeholder filled in. */
export function successUrlOf(checkout: Pick<CheckoutWire, 'id' | 'success_url'>): string | null {
  if (!checkout.success_url) return null;
  return checkout.success_url.replaceAll('{CHECKOUT_ID}', encodeURIComponent(checkout.id));
}
