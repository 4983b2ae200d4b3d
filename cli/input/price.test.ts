import { describe, expect, it } from 'vitest';
import { CliError } from '../errors.js';
import { parseInterval, parsePrice, pricesBody } from './price.js';

describe('the --price grammar', () => {
  it('reads AMOUNT:CURRENCY:INTERVAL as a fixed recurring price in minor units', () => {
    expect(parsePrice('1500:usd:month')).toEqual({ price: { amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }, interval: { unit: 'month', count: 1 } });
  });

  it('reads a price without an interval as one-time, and 0 or free as a free price', () => {
    expect(parsePrice('0:usd')).toEqual({ price: { amount_type: 'fixed', price_amount: 0, price_currency: 'usd' }, interval: null });
    expect(parsePrice('free:EUR')).toEqual({ price: { amount_type: 'fixed', price_amount: 0, price_currency: 'eur' }, interval: null });
  });

  it('reads custom prices with a minimum, an optional maximum and an optional preset', () => {
    expect(parsePrice('custom:500-5000:usd').price).toEqual({ amount_type: 'custom', minimum_amount: 500, maximum_amount: 5000, price_currency: 'usd' });
    expect(parsePrice('custom:500:usd:year')).toEqual({ price: { amount_type: 'custom', minimum_amount: 500, price_currency: 'usd' }, interval: { unit: 'year', count: 1 } });
    expect(parsePrice('custom:500-5000@1500:usd').price).toMatchObject({ minimum_amount: 500, maximum_amount: 5000, preset_amount: 1500 });
    expect(parsePrice('custom:0-:usd').price).toEqual({ amount_type: 'custom', minimum_amount: 0, price_currency: 'usd' });
  });

  it('reads metered prices: a decimal unit amount and a meter', () => {
    expect(parsePrice('metered:0.5:mtr_1:usd:month')).toEqual({
      price: { amount_type: 'metered_unit', unit_amount: '0.5', meter_id: 'mtr_1', price_currency: 'usd' },
      interval: { unit: 'month', count: 1 },
    });
  });

  it('reads a price id as a price to keep', () => {
    expect(parsePrice('9A1B2C3D-0000-4000-8000-000000000001')).toEqual({ price: { id: '9a1b2c3d-0000-4000-8000-000000000001' }, interval: null });
  });

  it('refuses amounts with decimals and suggests the minor units', () => {
    expect(() => parsePrice('15.00:usd')).toThrow('--price "15.00:usd": the amount is in minor units (cents), a whole number: 1500, not 15.00.');
  });

  it.each([
    ['1500', 'the currency is missing'],
    ['1500:dollars', '"dollars" is not a currency code'],
    ['abc:usd', '"abc" is not a whole number'],
    ['1500:usd:fortnight', '"fortnight" is not an interval'],
    ['1500:usd:month:extra', 'unexpected "extra"'],
    ['custom:5000-500:usd', 'the maximum is below the minimum'],
    ['custom:500-600@700:usd', 'the preset is outside the range'],
    ['custom:usd', 'a custom price is custom:MIN[-MAX][@PRESET]:CURRENCY'],
    ['metered:-1:m:usd', 'the unit amount must be a positive decimal'],
    ['metered:0.5', 'a metered price is metered:UNIT_AMOUNT:METER_ID:CURRENCY[:INTERVAL]'],
  ])('refuses %s: %s', (raw, reason) => {
    let caught: unknown;
    try {
      parsePrice(raw);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CliError);
    expect((caught as CliError).message).toContain(reason);
    expect((caught as CliError).exitCode).toBe(5);
  });
});

describe('intervals', () => {
  it('reads units, counts, plurals and adverbs', () => {
    expect(parseInterval('month', '--price')).toEqual({ unit: 'month', count: 1 });
    expect(parseInterval('3months', '--price')).toEqual({ unit: 'month', count: 3 });
    expect(parseInterval('2week', '--trial')).toEqual({ unit: 'week', count: 2 });
    expect(parseInterval('Yearly', '--price')).toEqual({ unit: 'year', count: 1 });
    expect(parseInterval('14days', '--trial')).toEqual({ unit: 'day', count: 14 });
  });

  it('refuses a zero count and unknown units', () => {
    expect(() => parseInterval('0month', '--trial')).toThrow('--trial: "0month" is not an interval.');
    expect(() => parseInterval('hour', '--trial')).toThrow(CliError);
  });
});

describe('a product\'s prices', () => {
  it('takes the billing interval the prices agree on', () => {
    const body = pricesBody([parsePrice('1500:usd:month'), parsePrice('metered:1:m:usd:month')]);
    expect(body.interval).toEqual({ unit: 'month', count: 1 });
    expect(body.prices).toHaveLength(2);
  });

  it('is one-time when no price names an interval', () => {
    expect(pricesBody([parsePrice('0:usd')]).interval).toBeNull();
  });

  it('refuses prices billed at different intervals, or some with an interval and some without', () => {
    expect(() => pricesBody([parsePrice('1500:usd:month'), parsePrice('15000:usd:year')])).toThrow('bill at different intervals');
    expect(() => pricesBody([parsePrice('1500:usd:month'), parsePrice('custom:500:usd')])).toThrow('some do not');
  });

  it('lets kept prices go without an interval next to new ones', () => {
    const body = pricesBody([parsePrice('00000000-0000-4000-8000-000000000001'), parsePrice('2000:usd:month')]);
    expect(body.prices).toEqual([{ id: '00000000-0000-4000-8000-000000000001' }, { amount_type: 'fixed', price_amount: 2000, price_currency: 'usd' }]);
  });
});
