import { describe, expect, it } from 'vitest';
import { formatMoney, parseMajorInput, toMajorInput } from './money.js';

describe('checkout amounts', () => {
  it('formats minor units in the currency, zero-decimal currencies without cents', () => {
    expect(formatMoney(1250, 'usd')).toBe('$12.50');
    expect(formatMoney(99_999_999, 'eur')).toBe('€999,999.99');
    expect(formatMoney(1200, 'jpy')).toBe('¥1,200');
    expect(formatMoney(0, 'gbp')).toBe('£0.00');
  });

  it('reads what a customer types as an exact number of minor units', () => {
    expect(parseMajorInput('12', 'usd')).toBe(1200);
    expect(parseMajorInput('12.5', 'usd')).toBe(1250);
    expect(parseMajorInput('0.29', 'usd')).toBe(29);
    expect(parseMajorInput('.5', 'usd')).toBe(50);
    expect(parseMajorInput('1,200.00', 'usd')).toBe(120000);
    expect(parseMajorInput('$ 12.50', 'usd')).toBe(1250);
    expect(parseMajorInput('1200', 'jpy')).toBe(1200);
  });

  it('refuses text that is not an amount in the currency', () => {
    for (const text of ['', 'abc', '-5', '12.505', '1e3', '12.5.0']) expect(parseMajorInput(text, 'usd')).toBeNull();
    expect(parseMajorInput('12.5', 'jpy')).toBeNull();
  });

  it('writes an amount back the way the input takes it', () => {
    expect(toMajorInput(1000, 'usd')).toBe('10.00');
    expect(toMajorInput(1200, 'jpy')).toBe('1200');
    expect(parseMajorInput(toMajorInput(1234, 'usd'), 'usd')).toBe(1234);
  });
});
