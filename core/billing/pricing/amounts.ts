import type { Executor } from '../../db/database.js';
import { findApplicableTaxRate } from '../tax-rates/repository.js';

/** What a discount takes off a subtotal: an amount in one currency, or a share in basis points. */
export type AmountDiscount = { type: 'fixed'; amount: number; currency: string } | { type: 'percentage'; basisPoints: number } | null;

export interface Amounts {
  subtotalAmount: number;
  discountAmount: number;
  netAmount: number;
  taxAmount: number;
  totalAmount: number;
}

/**
 * `amount × basisPoints / 10 000`, rounded half up, in integers only (no float error on large amounts).
 * The one rounding rule of Till's money: discounts and tax both use it.
 */
export function applyBasisPoints(amount: number, basisPoints: number): number {
  return Number((BigInt(amount) * BigInt(basisPoints) + 5_000n) / 10_000n);
}

/**
 * Every derived amount of a checkout or an order, in one place: the discount comes off the subtotal (a fixed
 * discount never below zero; its currency is checked by the caller), tax applies to the net amount, and the
 * total is net plus tax. All integers in minor units.
 */
export function computeAmounts(input: { subtotalAmount: number; discount: AmountDiscount; taxBasisPoints: number }): Amounts {
  const { subtotalAmount, discount, taxBasisPoints } = input;
  const discountAmount =
    discount === null ? 0 : discount.type === 'fixed' ? Math.min(discount.amount, subtotalAmount) : Math.min(applyBasisPoints(subtotalAmount, discount.basisPoints), subtotalAmount);
  const netAmount = subtotalAmount - discountAmount;
  const taxAmount = applyBasisPoints(netAmount, taxBasisPoints);
  return { subtotalAmount, discountAmount, netAmount, taxAmount, totalAmount: netAmount + taxAmount };
}

/**
 * The tax rate, in basis points, an organization charges at an address: the rate of its state if one is set,
 * else the rate of its country, else none (0). No address → 0.
 */
export async function taxBasisPointsFor(db: Executor, organizationId: string, address: { country: string; state?: string | null } | null): Promise<number> {
  if (!address) return 0;
  const rate = await findApplicableTaxRate(db, organizationId, address.country, address.state ?? null);
  return rate?.basisPoints ?? 0;
}
