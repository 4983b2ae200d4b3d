import { z } from 'zod';
import { Metadata } from '../shared/metadata.js';
import { Timestamp } from '../shared/time.js';
import { CURRENCIES } from '../shared/currencies.js';
import type { StoredProduct } from '../products/schema.js';

export const DISCOUNT_TYPES = ['fixed', 'percentage'] as const;
export const DISCOUNT_DURATIONS = ['once', 'forever', 'repeating'] as const;
export const DISCOUNT_SORTING = ['created_at', 'name', 'code', 'redemptions_count', 'ends_at'] as const;

/** Polar's code rule: letters and digits only, 3–256 of them; an empty string means "no code". */
const Code = z
  .string()
  .trim()
  .refine((value) => value === '' || /^[\p{L}\p{N}]{3,256}$/u.test(value), 'Code must be 3 to 256 letters or digits')
  .transform((value) => (value === '' ? null : value));

const Amount = z.number().int().min(0).max(999_999_999_999);
const Currency = z.enum(CURRENCIES, { error: 'Use a lowercase ISO 4217 code Till can charge in, such as usd' });
const BasisPoints = z.number().int().min(1).max(10_000);
const DurationInMonths = z.number().int().min(1).max(999);

/** Polar's multi-currency form: an amount per currency, at least one (the single `amount`/`currency` is deprecated). */
const Amounts = z.partialRecord(Currency, Amount).refine((amounts) => Object.keys(amounts).length >= 1, 'Give an amount in at least one currency');

const Common = {
  name: z.string().trim().min(1).max(256),
  code: Code.nullish(),
  starts_at: Timestamp.nullish(),
  ends_at: Timestamp.nullish(),
  max_redemptions: z.number().int().min(1).max(2_147_483_647).nullish(),
  max_redemptions_per_customer: z.number().int().min(1).max(2_147_483_647).nullish(),
  duration: z.enum(DISCOUNT_DURATIONS),
  duration_in_months: DurationInMonths.nullish(),
  products: z.array(z.uuid()).max(100).nullish(),
  organization_id: z.string().min(1).nullish(),
  metadata: Metadata.optional(),
};

type Issue = { path: (string | number)[]; message: string };

/** duration_in_months goes with `repeating` and only with it. */
function durationIssues(duration: string | null | undefined, months: number | null | undefined): Issue[] {
  if (duration === 'repeating' && (months === null || months === undefined)) {
    return [{ path: ['duration_in_months'], message: 'Field required for a repeating discount' }];
  }
  if (duration && duration !== 'repeating' && months !== null && months !== undefined) {
    return [{ path: ['duration_in_months'], message: 'Only a repeating discount takes duration_in_months' }];
  }
  return [];
}

/** starts_at comes strictly before ends_at when both are set. */
export function windowIssues(startsAt: Date | null | undefined, endsAt: Date | null | undefined): Issue[] {
  return startsAt && endsAt && startsAt >= endsAt ? [{ path: ['ends_at'], message: 'starts_at must be before ends_at' }] : [];
}

/** Polar takes the amount in one form or the other, never both; a create needs one of them. */
function amountFormIssues(input: { amount?: number | null; amounts?: object | null }, required: boolean): Issue[] {
  const hasAmount = input.amount !== null && input.amount !== undefined;
  const hasAmounts = input.amounts !== null && input.amounts !== undefined;
  if (hasAmount && hasAmounts) return [{ path: ['amounts'], message: 'Cannot specify both `amount` and `amounts`.' }];
  if (required && !hasAmount && !hasAmounts) return [{ path: ['amounts'], message: 'Must specify either `amount` or `amounts`.' }];
  return [];
}

const FixedCreate = z.object({
  ...Common,
  type: z.literal('fixed'),
  amount: Amount.nullish(),
  currency: Currency.nullish(),
  amounts: Amounts.nullish(),
});

const PercentageCreate = z.object({ ...Common, type: z.literal('percentage'), basis_points: BasisPoints });

/** POST /v1/discounts: `type` picks the fixed or the percentage form. */
export const DiscountCreate = z.discriminatedUnion('type', [FixedCreate, PercentageCreate]).superRefine((input, ctx) => {
  const issues = [...durationIssues(input.duration, input.duration_in_months), ...windowIssues(input.starts_at, input.ends_at)];
  if (input.type === 'fixed') issues.push(...amountFormIssues(input, true));
  for (const issue of issues) ctx.addIssue({ code: 'custom', ...issue });
});
export type DiscountCreate = z.infer<typeof DiscountCreate>;

/**
 * PATCH /v1/discounts/{id}. Every field optional; `null` leaves name, type, duration and the amount
 * as they are, and clears code, starts_at, ends_at, max_redemptions, max_redemptions_per_customer.
 */
export const DiscountUpdate = z.object({
  name: Common.name.nullish(),
  code: Code.nullish(),
  starts_at: Timestamp.nullish(),
  ends_at: Timestamp.nullish(),
  max_redemptions: Common.max_redemptions,
  max_redemptions_per_customer: Common.max_redemptions_per_customer,
  duration: z.enum(DISCOUNT_DURATIONS).nullish(),
  duration_in_months: DurationInMonths.nullish(),
  type: z.enum(DISCOUNT_TYPES).nullish(),
  amount: Amount.nullish(),
  currency: Currency.nullish(),
  amounts: Amounts.nullish(),
  basis_points: BasisPoints.nullish(),
  products: Common.products,
  metadata: Metadata.optional(),
}).superRefine((input, ctx) => {
  for (const issue of amountFormIssues(input, false)) ctx.addIssue({ code: 'custom', ...issue });
});
export type DiscountUpdate = z.infer<typeof DiscountUpdate>;

export type DiscountType = (typeof DISCOUNT_TYPES)[number];
export type DiscountDuration = (typeof DISCOUNT_DURATIONS)[number];

/** An amount per lowercase currency, in minor units. */
export type CurrencyAmounts = Record<string, number>;

/**
 * What a discount takes off: an amount in each of its currencies (a purchase in another currency cannot use it),
 * or a share in basis points (1/100 of a percent).
 */
export type DiscountTerms = { type: 'fixed'; amounts: CurrencyAmounts } | { type: 'percentage'; basisPoints: number };

/** A product a discount is restricted to: the product's own fields, without prices, benefits or media. */
export type DiscountProduct = StoredProduct;

/** A discount as stored: its restriction is a list of product ids. */
export type StoredDiscount = DiscountTerms & {
  id: string;
  organizationId: string;
  name: string;
  code: string | null;
  duration: DiscountDuration;
  /** Set exactly when the duration is `repeating`. */
  durationInMonths: number | null;
  startsAt: Date | null;
  endsAt: Date | null;
  maxRedemptions: number | null;
  /** How often one customer may redeem it (by customer, or by address without its +tag); null: no limit. */
  maxRedemptionsPerCustomer: number | null;
  redemptionsCount: number;
  metadata: Metadata;
  productIds: string[];
  /** The organization's default presentment currency: which amount the deprecated `amount`/`currency` show. */
  organizationCurrency: string;
  createdAt: Date;
  modifiedAt: Date | null;
};

/** What a fixed discount takes off in a currency; undefined when it has no amount there. */
export function fixedAmountIn(discount: DiscountTerms, currency: string): number | undefined {
  return discount.type === 'fixed' ? discount.amounts[currency] : undefined;
}

/**
 * The deprecated single `amount`/`currency` Polar still answers: the amount in the organization's default currency
 * when the discount has one, else its first currency (Polar's JSONB map, whose keys come out in alphabetical order).
 */
export function legacyAmount(amounts: CurrencyAmounts, organizationCurrency: string): { amount: number; currency: string } {
  const currency = organizationCurrency in amounts ? organizationCurrency : Object.keys(amounts).sort()[0];
  return { amount: amounts[currency], currency };
}

/** A discount with the products it is restricted to (none: it applies to every product). */
export type Discount = StoredDiscount & { products: DiscountProduct[] };
