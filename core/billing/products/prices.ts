import { newId } from '../../db/columns.js';
import { formatAmount, MAXIMUM_AMOUNT, MINIMUM_AMOUNTS, type Currency } from '../shared/currencies.js';
import { issue, type Issue } from './issues.js';
import type { Interval, Price, PriceCreate, PriceMeter, PriceTerms, PriceUpdateItem } from './schema.js';
import type { Executor } from '../../db/database.js';
import { findMetersByIds } from '../../metering/meters-repository.js';

/** A price as given on input, after its schema (only the fields the amount rules read). */
interface PriceAmounts {
  amount_type: string;
  price_currency: Currency;
  price_amount?: number;
  minimum_amount?: number;
  maximum_amount?: number | null;
  preset_amount?: number | null;
  seat_tiers?: { tiers: { price_per_seat: number }[] };
}

export interface AmountIssue {
  field: string;
  message: string;
}

/** Why `amount` cannot be charged in `currency`, if it cannot: below the minimum (0 allowed when `zero`) or above the maximum. */
function amountIssue(field: string, amount: number, currency: Currency, zero: boolean): AmountIssue[] {
  const minimum = MINIMUM_AMOUNTS[currency];
  if (amount < minimum && !(zero && amount === 0)) {
    return [{ field, message: `Amount must be at least ${formatAmount(minimum, currency)}${zero ? ' or 0 for free pricing' : ''}` }];
  }
  if (amount > MAXIMUM_AMOUNT) return [{ field, message: `Amount must be at most ${formatAmount(MAXIMUM_AMOUNT, currency)}` }];
  return [];
}

/** The amount rules of one price, each naming the field it concerns. */
export function amountIssues(price: PriceAmounts): AmountIssue[] {
  const currency = price.price_currency;
  switch (price.amount_type) {
    case 'fixed':
      return amountIssue('price_amount', price.price_amount ?? 0, currency, true);
    case 'custom': {
      const minimum = price.minimum_amount ?? 0;
      const maximum = price.maximum_amount ?? null;
      const preset = price.preset_amount ?? null;
      const issues = amountIssue('minimum_amount', minimum, currency, true);
      if (maximum !== null) {
        issues.push(...amountIssue('maximum_amount', maximum, currency, false));
        if (maximum < minimum) issues.push({ field: 'maximum_amount', message: 'maximum_amount must not be below minimum_amount' });
      }
      if (preset !== null) {
        issues.push(...amountIssue('preset_amount', preset, currency, true));
        if (preset !== 0 && (preset < minimum || (maximum !== null && preset > maximum))) {
          issues.push({ field: 'preset_amount', message: 'preset_amount must lie between minimum_amount and maximum_amount' });
        }
      }
      return issues;
    }
    case 'seat_based':
      return (price.seat_tiers?.tiers ?? []).some((tier) => tier.price_per_seat > MAXIMUM_AMOUNT)
        ? [{ field: 'seat_tiers', message: `Amount must be at most ${formatAmount(MAXIMUM_AMOUNT, currency)}` }]
        : [];
    default:
      return [];
  }
}

/** Seat tiers (sorted by min_seats) must cover a contiguous range from their first min_seats. */
export function seatTierIssues(tiers: readonly { min_seats: number; max_seats: number | null }[]): string[] {
  const issues: string[] = [];
  tiers.forEach((tier, index) => {
    const next = tiers[index + 1];
    if (tier.max_seats !== null && tier.max_seats < tier.min_seats) issues.push(`Tier starting at ${tier.min_seats} ends before it starts`);
    if (!next) return;
    if (tier.max_seats === null) issues.push('Only the last tier can have unlimited max_seats (null)');
    else if (next.min_seats !== tier.max_seats + 1) issues.push(`Gap or overlap between tiers: tier ending at ${tier.max_seats} and tier starting at ${next.min_seats}`);
  });
  return issues;
}

/** What the price-set rules read of a price, new or kept. */
export interface PriceShape {
  terms: PriceTerms;
  currency: string;
  taxBehavior: string | null;
  legacy: boolean;
}

/**
 * Polar's rules for a product's set of prices, per currency: at most one fixed and one seat-based price
 * (billed together), or a single custom price; a free price (fixed 0) stands alone; one tax behavior;
 * every currency offers the same kinds of price; the organization's default currency is among them.
 * A legacy product (only legacy prices) predates these rules and is not held to the per-currency ones.
 */
export function priceSetIssues(prices: readonly PriceShape[], defaultCurrency: string): string[] {
  const issues: string[] = [];
  const byCurrency = new Map<string, PriceShape[]>();
  for (const price of prices) byCurrency.set(price.currency, [...(byCurrency.get(price.currency) ?? []), price]);
  const structures = new Set<string>();
  for (const [currency, group] of byCurrency) {
    const count = (type: PriceTerms['amountType']) => group.filter((price) => price.terms.amountType === type).length;
    const [fixed, custom, seats] = [count('fixed'), count('custom'), count('seat_based')];
    if (!group.every((price) => price.legacy)) {
      if (fixed > 1) issues.push('Only one fixed price is allowed.');
      if (seats > 1) issues.push('Only one seat-based price is allowed.');
      if (custom > 1) issues.push('Only one custom price is allowed.');
      if (custom && (fixed || seats)) issues.push('A custom price cannot be combined with a fixed or seat-based price.');
      // Metered prices bill usage on top of the others (a free base with usage is a common plan).
      const unmetered = group.filter((price) => price.terms.amountType !== 'metered_unit');
      if (unmetered.length > 1 && unmetered.some((price) => price.terms.amountType === 'fixed' && price.terms.priceAmount === 0)) {
        issues.push('A free price cannot be combined with other prices.');
      }
    }
    if (new Set(group.map((price) => price.taxBehavior)).size > 1) issues.push(`All prices in ${currency} must have the same tax behavior.`);
    structures.add([fixed > 0, custom > 0, seats > 0].join());
  }
  if (structures.size > 1) issues.push('All price currencies must define the same set of price types.');
  if (prices.length && !byCurrency.has(defaultCurrency)) issues.push(`The organization's default presentment currency (${defaultCurrency}) must be present in the prices.`);
  return [...new Set(issues)];
}

/** Why a product's own meter cycle is refused: Till bills metered prices with each renewal of the subscription. */
export const METERS_UNAVAILABLE = 'A separate meter cycle is not supported: Till bills metered prices with each renewal.';

/**
 * The live meters of the organization that the metered prices among `items` name, by id: what planPrices needs
 * to create them (a meter of another organization, or an archived one, is left out and refused there).
 */
export async function metersForPrices(db: Executor, organizationId: string, items: readonly (PriceCreate | PriceUpdateItem)[]): Promise<Map<string, PriceMeter>> {
  const ids = items.flatMap((item) => ('amount_type' in item && item.amount_type === 'metered_unit' ? [item.meter_id] : []));
  const meters = (await findMetersByIds(db, ids)).filter((meter) => meter.organizationId === organizationId && meter.archivedAt === null);
  return new Map(meters.map((meter) => [meter.id, { id: meter.id, name: meter.name, unit: meter.unit, customLabel: meter.customLabel, customMultiplier: meter.customMultiplier }]));
}

/** The terms of a validated new price, as core keeps them. */
export function termsOf(price: Exclude<PriceCreate, { amount_type: 'metered_unit' }>): PriceTerms {
  switch (price.amount_type) {
    case 'fixed':
      return { amountType: 'fixed', priceAmount: price.price_amount };
    case 'custom':
      return { amountType: 'custom', minimumAmount: price.minimum_amount, maximumAmount: price.maximum_amount, presetAmount: price.preset_amount };
    case 'seat_based':
      return { amountType: 'seat_based', seatTiers: price.seat_tiers };
  }
}

export interface PricePlan {
  created: Price[];
  kept: Price[];
  /** Current prices the new set leaves out: they are archived, never edited or deleted. */
  archived: Price[];
  issues: Issue[];
}

/**
 * Turns a requested set of prices into what to create, keep and archive. `{id}` keeps one of the
 * product's current prices; anything else is a new price, placed after every price the product ever had.
 */
export function planPrices(input: {
  items: readonly (PriceCreate | PriceUpdateItem)[];
  current: readonly Price[];
  product: { id: string; recurringInterval: Interval | null };
  nextPosition: number;
  defaultCurrency: string;
  now: Date;
  /** The organization's live meters that metered prices may name (metersForPrices). */
  meters?: ReadonlyMap<string, PriceMeter>;
}): PricePlan {
  const issues: Issue[] = [];
  const kept: Price[] = [];
  const created: Price[] = [];
  input.items.forEach((item, index) => {
    if ('id' in item) {
      const price = input.current.find((candidate) => candidate.id === item.id);
      if (!price) issues.push(issue(['prices', index], 'Price does not exist.'));
      else if (kept.includes(price)) issues.push(issue(['prices', index], 'Listed more than once.'));
      else kept.push(price);
    } else if (item.amount_type === 'metered_unit' && input.product.recurringInterval === null) {
      issues.push(issue(['prices', index], 'Metered pricing is not supported on one-time products.'));
    } else if (item.amount_type === 'metered_unit' && !input.meters?.has(item.meter_id)) {
      issues.push(issue(['prices', index, 'meter_id'], 'Meter does not exist.'));
    } else {
      const terms: PriceTerms =
        item.amount_type === 'metered_unit'
          ? { amountType: 'metered_unit', unitAmount: item.unit_amount, capAmount: item.cap_amount ?? null, meterId: item.meter_id, meter: input.meters!.get(item.meter_id)! }
          : termsOf(item);
      created.push({
        ...terms,
        id: newId(),
        productId: input.product.id,
        source: 'catalog',
        priceCurrency: item.price_currency,
        taxBehavior: item.tax_behavior,
        isArchived: false,
        legacyRecurringInterval: null,
        position: input.nextPosition + created.length,
        createdAt: input.now,
        modifiedAt: null,
      });
    }
  });
  const prices = [...kept, ...created];
  if (prices.length === 0 && issues.length === 0) issues.push(issue(['prices'], 'At least one price is required.'));
  const shapes = prices.map((price) => ({ terms: price, currency: price.priceCurrency, taxBehavior: price.taxBehavior, legacy: price.legacyRecurringInterval !== null }));
  issues.push(...priceSetIssues(shapes, input.defaultCurrency).map((message) => issue(['prices'], message)));
  return { created, kept, archived: input.current.filter((price) => !kept.includes(price)), issues };
}
