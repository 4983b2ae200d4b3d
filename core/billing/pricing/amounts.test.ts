import { describe, expect, it } from 'vitest';
import { applyBasisPoints, computeAmounts } from './amounts.js';

describe('computeAmounts', () => {
  it('takes a percentage off the subtotal and taxes the net amount, rounding half up', () => {
    expect(computeAmounts({ subtotalAmount: 999, discount: { type: 'percentage', basisPoints: 3333 }, taxBasisPoints: 2000 })).toEqual({
      subtotalAmount: 999,
      discountAmount: 333,
      netAmount: 666,
      taxAmount: 133,
      totalAmount: 799,
    });
    expect(applyBasisPoints(5, 1000)).toBe(1); // 0.5 → 1
    expect(applyBasisPoints(4, 1000)).toBe(0); // 0.4 → 0
  });

  it('never discounts a fixed amount below zero', () => {
    expect(computeAmounts({ subtotalAmount: 300, discount: { type: 'fixed', amount: 500, currency: 'usd' }, taxBasisPoints: 1000 })).toEqual({
      subtotalAmount: 300,
      discountAmount: 300,
      netAmount: 0,
      taxAmount: 0,
      totalAmount: 0,
    });
  });

  it('stays exact on amounts beyond float precision of the product', () => {
    expect(applyBasisPoints(99_999_999_999, 9999)).toBe(99_989_999_999);
  });
});
