import { describe, expect, it } from 'vitest';
import { amountIssues, planPrices, priceSetIssues, seatTierIssues, type PriceShape } from './prices.js';

const fixed = (priceAmount: number, currency = 'usd', taxBehavior: string | null = null): PriceShape => ({ terms: { amountType: 'fixed', priceAmount }, currency, taxBehavior, legacy: false });
const custom = (currency = 'usd'): PriceShape => ({ terms: { amountType: 'custom', minimumAmount: 50, maximumAmount: null, presetAmount: null }, currency, taxBehavior: null, legacy: false });
const seats = (currency = 'usd'): PriceShape => ({
  terms: { amountType: 'seat_based', seatTiers: { seat_tier_type: 'volume', tiers: [{ min_seats: 1, max_seats: null, price_per_seat: 500 }] } },
  currency,
  taxBehavior: null,
  legacy: false,
});

describe('amountIssues', () => {
  it('takes 0 or at least the currency minimum, in minor units of that currency', () => {
    expect(amountIssues({ amount_type: 'fixed', price_currency: 'usd', price_amount: 0 })).toEqual([]);
    expect(amountIssues({ amount_type: 'fixed', price_currency: 'usd', price_amount: 50 })).toEqual([]);
    expect(amountIssues({ amount_type: 'fixed', price_currency: 'usd', price_amount: 49 })).toEqual([{ field: 'price_amount', message: 'Amount must be at least 0.50 USD or 0 for free pricing' }]);
    expect(amountIssues({ amount_type: 'fixed', price_currency: 'jpy', price_amount: 79 })[0].message).toBe('Amount must be at least 80 JPY or 0 for free pricing');
    expect(amountIssues({ amount_type: 'fixed', price_currency: 'usd', price_amount: 100_000_000 })[0].message).toBe('Amount must be at most 999999.99 USD');
  });

  it('keeps a custom price between its minimum and maximum, the preset inside them', () => {
    expect(amountIssues({ amount_type: 'custom', price_currency: 'usd', minimum_amount: 0, maximum_amount: 5000, preset_amount: 0 })).toEqual([]);
    expect(amountIssues({ amount_type: 'custom', price_currency: 'usd', minimum_amount: 500, maximum_amount: 400 }).map((i) => i.field)).toEqual(['maximum_amount']);
    expect(amountIssues({ amount_type: 'custom', price_currency: 'usd', minimum_amount: 500, maximum_amount: 0 }).map((i) => i.field)).toEqual(['maximum_amount', 'maximum_amount']);
    expect(amountIssues({ amount_type: 'custom', price_currency: 'usd', minimum_amount: 500, preset_amount: 100 }).map((i) => i.field)).toEqual(['preset_amount']);
  });
});

describe('seatTierIssues', () => {
  it('accepts contiguous tiers whose last one may be unlimited', () => {
    expect(seatTierIssues([{ min_seats: 1, max_seats: 5 }, { min_seats: 6, max_seats: null }])).toEqual([]);
  });

  it('refuses gaps, overlaps and an unlimited tier before the last', () => {
    expect(seatTierIssues([{ min_seats: 1, max_seats: 5 }, { min_seats: 7, max_seats: null }])).toHaveLength(1);
    expect(seatTierIssues([{ min_seats: 1, max_seats: 5 }, { min_seats: 5, max_seats: 9 }])).toHaveLength(1);
    expect(seatTierIssues([{ min_seats: 1, max_seats: null }, { min_seats: 2, max_seats: null }])).toEqual(['Only the last tier can have unlimited max_seats (null)']);
    expect(seatTierIssues([{ min_seats: 5, max_seats: 2 }])).toHaveLength(1);
  });
});

describe('priceSetIssues', () => {
  it('lets one fixed and one seat-based price go together, in every currency alike', () => {
    expect(priceSetIssues([fixed(1000), seats(), fixed(900, 'eur'), seats('eur')], 'usd')).toEqual([]);
  });

  it('refuses two of a kind, custom beside fixed, and a free price beside anything', () => {
    expect(priceSetIssues([fixed(1000), fixed(2000)], 'usd')).toEqual(['Only one fixed price is allowed.']);
    expect(priceSetIssues([custom(), custom()], 'usd')).toEqual(['Only one custom price is allowed.']);
    expect(priceSetIssues([custom(), fixed(1000)], 'usd')).toEqual(['A custom price cannot be combined with a fixed or seat-based price.']);
    expect(priceSetIssues([fixed(0), seats()], 'usd')).toEqual(['A free price cannot be combined with other prices.']);
  });

  it('wants one tax behavior per currency, the same kinds of price in each, and the default currency', () => {
    expect(priceSetIssues([fixed(1000), fixed(900, 'eur', 'inclusive')], 'usd')).toEqual([]);
    expect(priceSetIssues([fixed(1000), seats('usd'), fixed(900, 'eur')], 'usd')).toEqual(['All price currencies must define the same set of price types.']);
    expect(priceSetIssues([fixed(900, 'eur')], 'usd')).toEqual(["The organization's default presentment currency (usd) must be present in the prices."]);
  });

  it('does not hold a legacy product to the per-currency rules', () => {
    expect(priceSetIssues([{ ...fixed(1000), legacy: true }, { ...fixed(10000), legacy: true }], 'usd')).toEqual([]);
  });
});

describe('planPrices', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  it('keeps named prices, creates the new ones after every earlier position, and archives the rest', () => {
    const first = planPrices({ items: [{ amount_type: 'fixed', price_amount: 1000, price_currency: 'usd', tax_behavior: null }], current: [], product: { id: 'p', recurringInterval: 'month' }, nextPosition: 0, defaultCurrency: 'usd', now });
    expect(first.issues).toEqual([]);
    const [price] = first.created;
    const second = planPrices({
      items: [{ id: price.id }, { amount_type: 'fixed', price_amount: 900, price_currency: 'eur', tax_behavior: null }],
      current: [price],
      product: { id: 'p', recurringInterval: 'month' },
      nextPosition: 3,
      defaultCurrency: 'usd',
      now,
    });
    expect(second).toMatchObject({ kept: [price], archived: [], issues: [] });
    expect(second.created).toEqual([expect.objectContaining({ priceCurrency: 'eur', position: 3, isArchived: false, source: 'catalog' })]);
    const third = planPrices({ items: [{ amount_type: 'custom', minimum_amount: 50, maximum_amount: null, preset_amount: null, price_currency: 'usd', tax_behavior: null }], current: [price], product: { id: 'p', recurringInterval: 'month' }, nextPosition: 4, defaultCurrency: 'usd', now });
    expect(third.archived).toEqual([price]);
  });
});
