import { CoreError } from '../../errors.js';
import { fixedAmountIn, type StoredDiscount } from '../discounts/schema.js';
import { discountTerms } from '../pricing/discount-terms.js';
import type { Price, Product } from '../products/schema.js';
import { computeAmounts, type Amounts } from '../pricing/amounts.js';
import { formatAmount } from '../shared/currencies.js';
import type { Issue } from './custom-field-data.js';

export const issue = (path: (string | number)[], msg: string, type = 'value_error'): Issue => ({ loc: ['body', ...path], msg, type });
export const invalid = (issues: Issue[]) => new CoreError('invalid', 'INVALID_CHECKOUT', issues[0]?.msg ?? 'Invalid checkout', issues);

/**
 * The price a checkout charges for a product: the one named (it must be a current price of the product),
 * else the product's first price in the currency, else its first price.
 */
export function selectPrice(product: Product, options: { priceId?: string | null; currency?: string | null; field?: string }): Price {
  const field = options.field ?? 'product_price_id';
  if (options.priceId) {
    const price = product.prices.find((p) => p.id === options.priceId);
    if (!price) throw invalid([issue([field], 'This price is not a current price of the product.')]);
    return price;
  }
  // A metered price is billed on usage; the checkout selects the product's up-front price when it has one.
  const candidates = [...product.prices].sort((a, b) => Number(a.amountType === 'metered_unit') - Number(b.amountType === 'metered_unit'));
  const price = (options.currency ? candidates.find((p) => p.priceCurrency === options.currency) : undefined) ?? candidates[0];
  if (!price) throw invalid([issue(['products'], `The product ${product.name} has no price to sell it at.`)]);
  if (options.currency && price.priceCurrency !== options.currency) {
    throw invalid([issue(['currency'], `The product ${product.name} has no price in ${options.currency}.`)]);
  }
  return price;
}

/** What the price charges before discount and tax; a pay-what-you-want amount must sit within its bounds. */
export function subtotalOf(price: Price, customAmount: number | null): number {
  switch (price.amountType) {
    case 'fixed':
      return price.priceAmount;
    case 'custom': {
      const amount = customAmount ?? price.presetAmount ?? price.minimumAmount;
      if (amount < price.minimumAmount && amount !== 0) {
        throw invalid([issue(['amount'], `The amount must be at least ${formatAmount(price.minimumAmount, price.priceCurrency)}.`, 'greater_than_equal')]);
      }
      if (amount === 0 && price.minimumAmount > 0) {
        throw invalid([issue(['amount'], `The amount must be at least ${formatAmount(price.minimumAmount, price.priceCurrency)}.`, 'greater_than_equal')]);
      }
      if (price.maximumAmount !== null && amount > price.maximumAmount) {
        throw invalid([issue(['amount'], `The amount must be at most ${formatAmount(price.maximumAmount, price.priceCurrency)}.`, 'less_than_equal')]);
      }
      return amount;
    }
    case 'seat_based':
      throw invalid([issue(['product_price_id'], 'Seat-based prices cannot be bought through a checkout in Till yet.')]);
    case 'metered_unit':
      // Usage is billed at the end of each period, never up front.
      return 0;
  }
}

/** A price that costs nothing: no discount applies to it and no payment is taken. */
export const isFreePrice = (price: Price): boolean => price.amountType === 'fixed' && price.priceAmount === 0;

/**
 * Why a discount cannot apply to this purchase, or null when it can. `scope` problems are about what is bought
 * (product, currency, a free price); `availability` ones about the discount now (its window on the organization's
 * clock, its redemptions).
 */
export function discountIssue(discount: StoredDiscount, purchase: { now: Date; productId: string; currency: string; price: Price }): { kind: 'scope' | 'availability'; message: string } | null {
  const scope = (message: string) => ({ kind: 'scope' as const, message });
  const availability = (message: string) => ({ kind: 'availability' as const, message });
  if (isFreePrice(purchase.price)) return scope('A discount cannot apply to a free price.');
  if (discount.productIds.length && !discount.productIds.includes(purchase.productId)) return scope('This discount does not apply to this product.');
  if (discount.type === 'fixed' && fixedAmountIn(discount, purchase.currency) === undefined) {
    return scope(`This discount has no amount in ${purchase.currency.toUpperCase()}, the checkout's currency (it has ${currencyList(discount.amounts)}).`);
  }
  if (discount.startsAt && purchase.now < discount.startsAt) return availability('This discount is not valid yet.');
  if (discount.endsAt && purchase.now >= discount.endsAt) return availability('This discount has expired.');
  if (discount.maxRedemptions !== null && discount.redemptionsCount >= discount.maxRedemptions) return availability('This discount has been fully redeemed.');
  return null;
}

/** The message of discountIssue, or null. */
export const discountProblem = (discount: StoredDiscount, purchase: Parameters<typeof discountIssue>[1]): string | null => discountIssue(discount, purchase)?.message ?? null;

const currencyList = (amounts: Record<string, number>) => Object.keys(amounts).sort().map((c) => c.toUpperCase()).join(', ');

/** The checkout's amounts, a fixed discount taking off its amount in the checkout's currency: the one call to computeAmounts for a checkout. */
export function checkoutAmounts(subtotalAmount: number, currency: string, discount: StoredDiscount | null, taxBasisPoints: number): Amounts {
  return computeAmounts({ subtotalAmount, discount: discountTerms(discount, currency), taxBasisPoints });
}
