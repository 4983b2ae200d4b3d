import type { Executor } from '../../db/database.js';
import { computeAmounts, taxBasisPointsFor, type Amounts } from '../pricing/amounts.js';
import { discountTerms } from '../pricing/discount-terms.js';
import { findCustomers } from '../customers/repository.js';
import type { StoredDiscount } from '../discounts/schema.js';
import type { OrderCreateInput } from '../orders/schema.js';
import type { Subscription } from './schema.js';

export interface Line {
  label: string;
  amount: number;
  proration: boolean;
  productPriceId: string | null;
}


/**
 * Spreads the order's tax over its lines in proportion to their amounts, the last line taking what rounding left,
 * so the lines' tax adds up to the order's exactly.
 */
function taxPerLine(lines: readonly Line[], taxAmount: number, subtotal: number): number[] {
  if (lines.length === 0) return [];
  let left = taxAmount;
  return lines.map((line, index) => {
    if (index === lines.length - 1) return left;
    const share = subtotal === 0 ? 0 : Math.round((taxAmount * line.amount) / subtotal);
    left -= share;
    return share;
  });
}

/**
 * The order a subscription owes for `lines`: the amounts computed in the one place they are (discount off the
 * subtotal, tax on the net at the customer's billing address), billed to the customer's billing details.
 * `lines` must add up to zero or more.
 */
export async function orderInput(
  db: Executor,
  s: Subscription,
  lines: readonly Line[],
  options: { discount: StoredDiscount | null; billingReason: OrderCreateInput['billingReason'] },
): Promise<{ input: Omit<OrderCreateInput, 'status' | 'paymentId'>; amounts: Amounts }> {
  const [customer] = await findCustomers(db, { id: s.customerId }, [s.organizationId]);
  const subtotalAmount = lines.reduce((sum, line) => sum + line.amount, 0);
  const taxBasisPoints = await taxBasisPointsFor(db, s.organizationId, customer?.billingAddress ?? null);
  const discount = discountTerms(options.discount, s.currency);
  const amounts = computeAmounts({ subtotalAmount, discount, taxBasisPoints });
  const taxes = taxPerLine(lines, amounts.taxAmount, subtotalAmount);
  return {
    amounts,
    input: {
      organizationId: s.organizationId,
      customerId: s.customerId,
      productId: s.productId,
      subscriptionId: s.id,
      checkoutId: null,
      billingReason: options.billingReason,
      currency: s.currency,
      items: lines.map((line, index) => ({ ...line, taxAmount: taxes[index] })),
      ...amounts,
      discountId: discount ? (options.discount?.id ?? null) : null,
      billingName: customer?.billingName ?? customer?.name ?? null,
      billingAddress: customer?.billingAddress ?? null,
      metadata: {},
      customFieldData: {},
    },
  };
}
