import { z } from 'zod';
import type { Benefit } from '../benefits/schema.js';
import type { CustomField } from '../custom-fields/schema.js';
import type { FileRecord } from '../files/schema.js';
import { Metadata } from '../shared/metadata.js';
import { TAX_BEHAVIORS } from '../organizations/schema.js';
import { CURRENCIES } from '../shared/currencies.js';
import { amountIssues, seatTierIssues } from './prices.js';

export const INTERVALS = ['day', 'week', 'month', 'year'] as const;
export type Interval = (typeof INTERVALS)[number];
export const VISIBILITIES = ['draft', 'private', 'public'] as const;
export type Visibility = (typeof VISIBILITIES)[number];
export type TaxBehavior = (typeof TAX_BEHAVIORS)[number];
export const PRODUCT_SORTING = ['created_at', 'name', 'price_amount_type', 'price_amount'] as const;

const Amount = z.number().int().min(0);
const PriceCommon = {
  price_currency: z.enum(CURRENCIES, { error: 'Use a supported lowercase ISO 4217 code such as usd' }).default('usd'),
  tax_behavior: z.enum(TAX_BEHAVIORS).nullish().transform((value) => value ?? null),
};

const FixedCreate = z.object({ ...PriceCommon, amount_type: z.literal('fixed'), price_amount: Amount });

const CustomCreate = z.object({
  ...PriceCommon,
  amount_type: z.literal('custom'),
  minimum_amount: Amount.default(50),
  maximum_amount: Amount.nullish().transform((value) => value ?? null),
  preset_amount: Amount.nullish().transform((value) => value ?? null),
});

/** Polar's former free price, still accepted on input: it is a fixed price of 0. */
const FreeCreate = z
  .object({ ...PriceCommon, amount_type: z.literal('free') })
  .transform(({ price_currency, tax_behavior }) => ({ price_currency, tax_behavior, amount_type: 'fixed' as const, price_amount: 0 }));

/** A price per unit a meter counts, billed on each renewal; the meter must be one of the organization's live meters. */
const MeteredUnitCreate = z.object({
  ...PriceCommon,
  amount_type: z.literal('metered_unit'),
  meter_id: z.uuid(),
  unit_amount: z
    .union([z.number(), z.string()])
    .transform(String)
    .pipe(z.string().regex(/^(?=.*[1-9])\d{1,5}(\.\d{1,12})?$/, 'Use a positive decimal of at most 17 digits, 12 of them after the point')),
  cap_amount: z.number().int().min(0).max(2_147_483_647).nullish(),
});

const SeatTier = z.object({
  min_seats: z.number().int().min(1),
  max_seats: z.number().int().min(1).nullish().transform((value) => value ?? null),
  price_per_seat: Amount,
});

export const SeatTiers = z
  .object({ seat_tier_type: z.enum(['volume', 'graduated']).default('volume'), tiers: z.array(SeatTier).min(1).max(100) })
  .transform((value) => ({ ...value, tiers: [...value.tiers].sort((a, b) => a.min_seats - b.min_seats) }))
  .superRefine((value, ctx) => {
    for (const issue of seatTierIssues(value.tiers)) ctx.addIssue({ code: 'custom', path: ['tiers'], message: issue });
  });
export type SeatTiers = z.infer<typeof SeatTiers>;

const SeatBasedCreate = z.object({ ...PriceCommon, amount_type: z.literal('seat_based'), seat_tiers: SeatTiers });

const AMOUNT_TYPES_HINT = 'Expected amount_type fixed, custom, free, metered_unit or seat_based';

/** A new price, by `amount_type`; amounts are checked against the currency's minimum and maximum. */
export const PriceCreate = z
  .discriminatedUnion('amount_type', [FixedCreate, CustomCreate, FreeCreate, MeteredUnitCreate, SeatBasedCreate], { error: AMOUNT_TYPES_HINT })
  .superRefine((price, ctx) => {
    for (const issue of amountIssues(price)) ctx.addIssue({ code: 'custom', path: [issue.field], message: issue.message });
  });
export type PriceCreate = z.infer<typeof PriceCreate>;

/** In an update, `{id}` keeps one of the product's current prices; anything else is a new price. */
const ExistingPrice = z.object({ amount_type: z.undefined().optional(), id: z.uuid() });

const PriceUpdateItem = z
  .discriminatedUnion('amount_type', [ExistingPrice, FixedCreate, CustomCreate, FreeCreate, MeteredUnitCreate, SeatBasedCreate], {
    error: `Expected {id} of an existing price, or a new price: ${AMOUNT_TYPES_HINT}`,
  })
  .superRefine((price, ctx) => {
    if ('id' in price) return;
    for (const issue of amountIssues(price)) ctx.addIssue({ code: 'custom', path: [issue.field], message: issue.message });
  });
export type PriceUpdateItem = z.infer<typeof PriceUpdateItem>;

const Name = z.string().trim().min(3).max(64);
/** Polar turns an empty description into none. */
const Description = z.string().max(10_000).nullish().transform((value) => (value === '' ? null : value));
const IntervalCount = z.number().int().min(1).max(999);
const TrialCount = z.number().int().min(1).max(1000);
const AttachedCustomFields = z.array(z.object({ custom_field_id: z.uuid(), required: z.boolean() })).max(100);
const Medias = z.array(z.uuid()).max(100);

/**
 * POST /v1/products. A non-null `recurring_interval` makes a subscription product, none a one-time one
 * (Polar's ProductCreateRecurring | ProductCreateOneTime, told apart the same way).
 */
export const ProductCreate = z
  .object({
    name: Name,
    description: Description,
    visibility: z.enum(VISIBILITIES).default('public'),
    prices: z.array(PriceCreate).min(1, 'At least one price is required.').max(100),
    medias: Medias.nullish(),
    attached_custom_fields: AttachedCustomFields.default([]),
    organization_id: z.string().min(1).nullish(),
    metadata: Metadata.optional(),
    recurring_interval: z.enum(INTERVALS).nullish(),
    recurring_interval_count: IntervalCount.nullish(),
    trial_interval: z.enum(INTERVALS).nullish(),
    trial_interval_count: TrialCount.nullish(),
    meter_interval: z.enum(INTERVALS).nullish(),
    meter_interval_count: IntervalCount.nullish(),
  })
  .superRefine((input, ctx) => {
    const oneTime = input.recurring_interval === null || input.recurring_interval === undefined;
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (oneTime && input.recurring_interval_count != null) issue('recurring_interval_count', 'A one-time product has no recurring_interval_count');
    if (oneTime && (input.trial_interval != null || input.trial_interval_count != null)) {
      issue('trial_interval', 'Trial configuration is only supported on recurring products.');
    }
    if ((input.trial_interval == null) !== (input.trial_interval_count == null)) issue('trial_interval_count', 'Give trial_interval and trial_interval_count together');
  });
export type ProductCreate = z.infer<typeof ProductCreate>;

/**
 * PATCH /v1/products/{id}. Every field optional. `null` leaves name, visibility, is_archived, prices,
 * medias and custom fields as they are, and clears description and the trial. `prices` is the complete
 * new set: `{id}` keeps a current price, a new price is created, and every current price left out is
 * archived (never edited).
 */
export const ProductUpdate = z
  .object({
    name: Name.nullish(),
    description: Description,
    visibility: z.enum(VISIBILITIES).nullish(),
    is_archived: z.boolean().nullish(),
    metadata: Metadata.optional(),
    recurring_interval: z.enum(INTERVALS).nullish(),
    recurring_interval_count: IntervalCount.nullish(),
    trial_interval: z.enum(INTERVALS).nullish(),
    trial_interval_count: TrialCount.nullish(),
    prices: z.array(PriceUpdateItem).max(100).nullish(),
    medias: Medias.nullish(),
    attached_custom_fields: AttachedCustomFields.nullish(),
  })
  .superRefine((input, ctx) => {
    if (input.trial_interval !== undefined && input.trial_interval_count !== undefined && (input.trial_interval === null) !== (input.trial_interval_count === null)) {
      ctx.addIssue({ code: 'custom', path: ['trial_interval_count'], message: 'Give trial_interval and trial_interval_count together' });
    }
  });
export type ProductUpdate = z.infer<typeof ProductUpdate>;

/** POST /v1/products/{id}/benefits: the complete list, in display order. */
export const ProductBenefitsUpdate = z.object({ benefits: z.array(z.uuid()).max(100) });
export type ProductBenefitsUpdate = z.infer<typeof ProductBenefitsUpdate>;

/** What a price charges, by amount type. */
export type PriceTerms =
  | { amountType: 'fixed'; priceAmount: number }
  | { amountType: 'custom'; minimumAmount: number; maximumAmount: number | null; presetAmount: number | null }
  | { amountType: 'seat_based'; seatTiers: SeatTiers }
  | { amountType: 'metered_unit'; unitAmount: string; capAmount: number | null; meterId: string; meter: PriceMeter };

/** The meter a metered price bills, as a price shows it (Polar's ProductPriceMeter). */
export interface PriceMeter {
  id: string;
  name: string;
  unit: string;
  customLabel: string | null;
  customMultiplier: number | null;
}

export type Price = PriceTerms & {
  id: string;
  productId: string;
  source: 'catalog' | 'ad_hoc';
  priceCurrency: string;
  taxBehavior: TaxBehavior | null;
  isArchived: boolean;
  /** Set on a legacy recurring price only (Polar's model before products carried the interval). */
  legacyRecurringInterval: Interval | null;
  /** Order within the product's prices. */
  position: number;
  createdAt: Date;
  modifiedAt: Date | null;
};

/** A product's own row. */
export interface StoredProduct {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  visibility: Visibility;
  recurringInterval: Interval | null;
  recurringIntervalCount: number | null;
  trialInterval: Interval | null;
  trialIntervalCount: number | null;
  meterInterval: Interval | null;
  meterIntervalCount: number | null;
  isArchived: boolean;
  metadata: Metadata;
  createdAt: Date;
  modifiedAt: Date | null;
}

/** What a product links to, by id and in order (what its link tables hold). */
export interface ProductLinks {
  benefitIds: string[];
  mediaIds: string[];
  customFields: { customFieldId: string; required: boolean }[];
}

export interface AttachedCustomField {
  customField: CustomField;
  order: number;
  required: boolean;
}

/** A product as the API shows it: its current (non-archived) prices and what is attached to it. */
export interface Product extends StoredProduct {
  prices: Price[];
  benefits: Benefit[];
  medias: FileRecord[];
  attachedCustomFields: AttachedCustomField[];
}
