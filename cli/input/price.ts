import { CliError, EXIT } from '../errors.js';

/*
 * The `--price` grammar (docs/cli.md, "Prices"):
 *
 *   PRICE    = AMOUNT ":" CURRENCY [":" INTERVAL]  |  PRICE_ID
 *   AMOUNT   = MINOR_UNITS                       fixed price; 0 (or "free") is free
 *            | "custom:" MIN ["-" MAX] ["@" PRESET]   the customer chooses, MIN..MAX, PRESET suggested
 *            | "metered:" UNIT_AMOUNT ":" METER_ID     per unit of a meter (a decimal, in minor units)
 *   INTERVAL = [COUNT] ("day" | "week" | "month" | "year") ["s"]   also daily, weekly, monthly, yearly
 *
 * Amounts are whole minor units (cents), as the API takes them: 1500:usd is 15.00 USD.
 */

export const INTERVAL_UNITS = ['day', 'week', 'month', 'year'] as const;
export type IntervalUnit = (typeof INTERVAL_UNITS)[number];

export interface Interval {
  unit: IntervalUnit;
  count: number;
}

/** A price as POST/PATCH /v1/products take it (Polar's PriceCreate), or an existing price to keep. */
export type PriceInput =
  | { id: string }
  | { amount_type: 'fixed'; price_amount: number; price_currency: string }
  | { amount_type: 'custom'; minimum_amount: number; maximum_amount?: number; preset_amount?: number; price_currency: string }
  | { amount_type: 'metered_unit'; unit_amount: string; meter_id: string; price_currency: string };

export interface ParsedPrice {
  price: PriceInput;
  /** How often it bills; null for one-time and for a kept price (whose product already says). */
  interval: Interval | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ADVERBS: Record<string, IntervalUnit> = { daily: 'day', weekly: 'week', monthly: 'month', yearly: 'year', annually: 'year' };
const MAX_MINOR_UNITS = 99_999_999;

export const PRICE_HINT = 'Write --price AMOUNT:CURRENCY[:INTERVAL], e.g. 1500:usd:month, 0:usd, custom:500-5000:usd (amounts in cents).';

const invalid = (raw: string, reason: string) => new CliError('INVALID_FLAG', `--price ${JSON.stringify(raw)}: ${reason}`, EXIT.invalid, PRICE_HINT);

/** Parses one `--price` value. */
export function parsePrice(raw: string): ParsedPrice {
  const text = raw.trim();
  if (UUID.test(text)) return { price: { id: text.toLowerCase() }, interval: null };
  const parts = text.split(':');
  const kind = parts[0]!.toLowerCase();
  if (kind === 'custom') {
    // The range is checked before the currency: `custom:usd` lacks a range, not a currency.
    const range = customRange(raw, parts[1]);
    return withCurrency(raw, parts.slice(2), (currency) => ({ ...range, price_currency: currency }));
  }
  if (kind === 'metered') {
    const meterId = parts[2];
    if (!meterId) throw invalid(raw, 'a metered price is metered:UNIT_AMOUNT:METER_ID:CURRENCY[:INTERVAL].');
    return withCurrency(raw, parts.slice(3), (currency) => ({ amount_type: 'metered_unit', unit_amount: unitAmount(raw, parts[1]), meter_id: meterId, price_currency: currency }));
  }
  const amount = kind === 'free' ? 0 : minorUnits(raw, parts[0]!, 'the amount');
  return withCurrency(raw, parts.slice(1), (currency) => ({ amount_type: 'fixed', price_amount: amount, price_currency: currency }));
}

/** Reads the `CURRENCY[:INTERVAL]` tail and builds the price. */
function withCurrency(raw: string, tail: string[], build: (currency: string) => PriceInput): ParsedPrice {
  const [currency, interval, ...extra] = tail;
  if (!currency) throw invalid(raw, 'the currency is missing (e.g. usd).');
  if (!/^[a-z]{3}$/i.test(currency)) throw invalid(raw, `"${currency}" is not a currency code (three letters, e.g. usd).`);
  if (extra.length > 0) throw invalid(raw, `unexpected "${extra.join(':')}" after the interval.`);
  return { price: build(currency.toLowerCase()), interval: interval === undefined ? null : parseInterval(interval, `--price ${JSON.stringify(raw)}`) };
}

function customRange(raw: string, range: string | undefined) {
  const match = /^(\d+)(?:-(\d+)?)?(?:@(\d+))?$/.exec(range ?? '');
  if (!match) throw invalid(raw, 'a custom price is custom:MIN[-MAX][@PRESET]:CURRENCY, e.g. custom:500-5000:usd.');
  const minimum = minorUnits(raw, match[1]!, 'the minimum');
  const maximum = match[2] === undefined ? undefined : minorUnits(raw, match[2], 'the maximum');
  const preset = match[3] === undefined ? undefined : minorUnits(raw, match[3], 'the preset');
  if (maximum !== undefined && maximum < minimum) throw invalid(raw, 'the maximum is below the minimum.');
  if (preset !== undefined && (preset < minimum || (maximum !== undefined && preset > maximum))) throw invalid(raw, 'the preset is outside the range.');
  return {
    amount_type: 'custom' as const,
    minimum_amount: minimum,
    ...(maximum === undefined ? {} : { maximum_amount: maximum }),
    ...(preset === undefined ? {} : { preset_amount: preset }),
  };
}

function minorUnits(raw: string, text: string, what: string): number {
  if (/^\d+[.,]\d+$/.test(text)) {
    const cents = Math.round(Number(text.replace(',', '.')) * 100);
    throw invalid(raw, `${what} is in minor units (cents), a whole number: ${cents}, not ${text}.`);
  }
  if (!/^\d+$/.test(text)) throw invalid(raw, `${what} "${text}" is not a whole number of minor units.`);
  const value = Number(text);
  if (value > MAX_MINOR_UNITS) throw invalid(raw, `${what} is too large.`);
  return value;
}

function unitAmount(raw: string, text: string | undefined): string {
  if (!text || !/^\d+(\.\d{1,12})?$/.test(text) || Number(text) <= 0) throw invalid(raw, 'the unit amount must be a positive decimal number of minor units, e.g. 0.5.');
  return text;
}

/** `month`, `3month`, `3months`, `monthly`: how often a price bills (also `--trial 14day`). */
export function parseInterval(raw: string, flag: string): Interval {
  const text = raw.trim().toLowerCase();
  const adverb = ADVERBS[text];
  if (adverb) return { unit: adverb, count: 1 };
  const match = /^(\d{1,3})?\s*(day|week|month|year)s?$/.exec(text);
  if (!match || match[1] === '0') {
    throw new CliError('INVALID_FLAG', `${flag}: "${raw}" is not an interval.`, EXIT.invalid, 'Write day, week, month or year, optionally with a count: 3month, 2weeks, yearly.');
  }
  return { unit: match[2] as IntervalUnit, count: match[1] ? Number(match[1]) : 1 };
}

/** The product fields a set of `--price` values stands for: the prices, and the billing interval they agree on. */
export function pricesBody(parsed: readonly ParsedPrice[]): { prices: PriceInput[]; interval: Interval | null } {
  const intervals = parsed.flatMap((entry) => (entry.interval ? [entry.interval] : []));
  const first = intervals[0] ?? null;
  if (first && intervals.some((interval) => interval.unit !== first.unit || interval.count !== first.count)) {
    throw new CliError('INVALID_FLAG', 'The --price values bill at different intervals; a product has one billing interval.', EXIT.invalid, PRICE_HINT);
  }
  const newPrices = parsed.filter((entry) => !('id' in entry.price));
  if (first && newPrices.some((entry) => !entry.interval)) {
    throw new CliError('INVALID_FLAG', 'Some --price values have an interval and some do not: give every price of a recurring product its interval.', EXIT.invalid, PRICE_HINT);
  }
  return { prices: parsed.map((entry) => entry.price), interval: first };
}
