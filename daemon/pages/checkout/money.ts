/**
 * Amounts on the checkout page: integer minor units of a lower-case currency, shown the way a customer reads
 * them ("$12.50", "¥1,200") and read back from what they type ("12.5" → 1250).
 */

/** Stripe's zero-decimal currencies, as core/billing/shared/currencies.ts counts them: their minor unit is the whole unit. */
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);

/** Digits after the decimal point in `currency`'s minor unit. */
export function fractionDigits(currency: string): number {
  return ZERO_DECIMAL.has(currency.toLowerCase()) ? 0 : 2;
}

/** `formatMoney(1250, 'usd')` is "$12.50"; a currency Intl does not know still reads as "12.50 XYZ". */
export function formatMoney(amount: number, currency: string): string {
  const digits = fractionDigits(currency);
  const major = amount / 10 ** digits;
  try {
    return new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: currency.toUpperCase(),
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(major);
  } catch {
    return `${major.toFixed(digits)} ${currency.toUpperCase()}`;
  }
}

/** An amount in minor units as the plain number a customer would type back: 1250 → "12.50". */
export function toMajorInput(amount: number, currency: string): string {
  const digits = fractionDigits(currency);
  return (amount / 10 ** digits).toFixed(digits);
}

/**
 * What a customer typed as an amount ("12", "12.5", "1,200.00", "$ 12.50") in minor units, or null when it is
 * not an amount in this currency (letters, more decimals than the currency has, negative).
 * Parsed as a decimal string, never through floating point, so "0.29" is 29, not 28.
 */
export function parseMajorInput(text: string, currency: string): number | null {
  const digits = fractionDigits(currency);
  const cleaned = text.replace(/[\s,]/g, '').replace(/^[^\d.+-]{1,3}(?=[\d.])/, '');
  const match = /^(\d{1,9})(?:\.(\d*))?$/.exec(cleaned) ?? /^()\.(\d+)$/.exec(cleaned);
  if (!match) return null;
  const [, whole, fraction = ''] = match;
  if (fraction.length > digits) return null;
  return Number(whole || '0') * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
}
