import type { StoredDiscount } from '../discounts/schema.js';
import type { AmountDiscount } from './amounts.js';

/**
 * A discount's terms as the amounts module takes them for a purchase in `currency`: a fixed discount takes off its
 * amount in that currency, and nothing when it has none there (Polar's `is_applicable` keeps such a purchase from
 * taking it in the first place).
 */
export function discountTerms(discount: StoredDiscount | null, currency: string): AmountDiscount {
  if (!discount) return null;
  if (discount.type === 'percentage') return { type: 'percentage', basisPoints: discount.basisPoints };
  const amount = discount.amounts[currency];
  return amount === undefined ? null : { type: 'fixed', amount, currency };
}
