import { z } from 'zod';

/*
 * The catalog file (`till plan`, `till apply`, `till pull`; docs/catalog-as-code.md): an organization's
 * products, prices, benefits, custom fields, discounts, meters, webhook endpoints, tax rates and settings,
 * each under a key the file owns. Defaults are written here once, so a file that leaves a field out and one
 * that spells the default read the same. tilld publishes this schema at /v1/catalog/schema.json.
 */

const Key = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]{0,99}$/, 'Use 1–100 lowercase letters, digits, "-", "_" and ".", starting with a letter or digit')
  .describe('A stable key the file owns; other entries refer to this object by it');
const Ref = (kind: string) => z.string().min(1).describe(`The key of a ${kind} in this file`);
const Metadata = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}).describe('Free key-value pairs kept on the object');
/** A secret's only spelling in a file: one environment reference (`till` refuses anything else, cli/catalog/file.ts). */
export const ENV_REFERENCE_ONLY = /^\$\{env:[A-Za-z_][A-Za-z0-9_]*\}$/;
// The pattern is for editors (JSON Schema); the file is checked before `${env:…}` is filled in, so zod does not apply it.
const Secret = z.string().describe('Never the secret itself: `${env:NAME}` takes it from the environment of `till apply`').meta({ pattern: ENV_REFERENCE_ONLY.source });
const Currency = z.string().regex(/^[a-z]{3}$/, 'A lowercase ISO 4217 code such as usd');
const Interval = z.enum(['day', 'week', 'month', 'year']);

export const OrganizationSettings = z
  .object({
    name: z.string().min(3).max(64).optional(),
    email: z.string().nullable().optional(),
    website: z.string().nullable().optional(),
    subscription_settings: z
      .object({
        allow_multiple_subscriptions: z.boolean(),
        allow_customer_updates: z.boolean(),
        proration_behavior: z.enum(['invoice', 'prorate']),
        benefit_revocation_grace_period: z.number().int().min(0),
        prevent_trial_abuse: z.boolean(),
      })
      .partial()
      .strict()
      .optional(),
    notification_settings: z.object({ new_order: z.boolean(), new_subscription: z.boolean() }).partial().strict().optional(),
    default_tax_behavior: z.enum(['location', 'inclusive', 'exclusive']).optional(),
  })
  .strict()
  .describe('Organization settings; only the fields named are managed');
export type OrganizationSettings = z.infer<typeof OrganizationSettings>;

const FilterClause = z.object({ property: z.string().min(1), operator: z.enum(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'like', 'not_like']), value: z.union([z.string(), z.number(), z.boolean()]) }).strict();
const Filter = z.object({ conjunction: z.enum(['and', 'or']), clauses: z.array(z.union([FilterClause, z.object({ conjunction: z.enum(['and', 'or']), clauses: z.array(z.unknown()) })])) }).strict();

export const Meter = z
  .object({
    key: Key,
    name: z.string().min(3).max(256),
    filter: Filter,
    aggregation: z.object({ func: z.enum(['count', 'sum', 'max', 'min', 'avg', 'unique']), property: z.string().min(1).optional() }).strict(),
    unit: z.enum(['scalar', 'token', 'custom']).default('scalar'),
    custom_label: z.string().max(64).nullable().default(null),
    custom_multiplier: z.number().int().min(1).nullable().default(null),
    metadata: Metadata,
  })
  .strict();
export type Meter = z.infer<typeof Meter>;

export const CustomField = z
  .object({
    key: Key,
    type: z.enum(['checkbox', 'date', 'number', 'select', 'text']),
    slug: z.string().regex(/^[a-z0-9_-]{1,100}$/),
    name: z.string().min(1).max(256),
    properties: z
      .object({
        form_label: z.string().optional(),
        form_help_text: z.string().optional(),
        form_placeholder: z.string().optional(),
        ge: z.number().int().optional(),
        le: z.number().int().optional(),
        textarea: z.boolean().optional(),
        min_length: z.number().int().min(0).optional(),
        max_length: z.number().int().min(0).optional(),
        options: z.array(z.object({ value: z.string(), label: z.string() }).strict()).optional(),
      })
      .strict()
      .default({}),
    metadata: Metadata,
  })
  .strict();
export type CustomField = z.infer<typeof CustomField>;

const BenefitBase = { key: Key, description: z.string().min(3).max(42), metadata: Metadata };
export const Benefit = z.discriminatedUnion('type', [
  z.object({ ...BenefitBase, type: z.literal('custom'), properties: z.object({ note: z.string().nullable().default(null) }).strict().default({ note: null }) }).strict(),
  z
    .object({
      ...BenefitBase,
      type: z.literal('discord'),
      properties: z
        .object({
          guild_token: Secret.optional().describe('`${env:NAME}`; left out, the benefit keeps the token it has (`till pull` never writes it; a new benefit needs one)'),
          role_id: z.string().regex(/^\d{1,20}$/),
          kick_member: z.boolean().default(false),
        })
        .strict(),
    })
    .strict(),
  z
    .object({
      ...BenefitBase,
      type: z.literal('github_repository'),
      properties: z.object({ repository_owner: z.string(), repository_name: z.string(), permission: z.enum(['pull', 'triage', 'push', 'maintain', 'admin']) }).strict(),
    })
    .strict(),
  z
    .object({
      ...BenefitBase,
      type: z.literal('downloadables'),
      properties: z.object({ files: z.array(z.string().min(1)).min(1).describe('Ids of uploaded files (`till files upload`)') }).strict(),
    })
    .strict(),
  z
    .object({
      ...BenefitBase,
      type: z.literal('license_keys'),
      properties: z
        .object({
          prefix: z.string().nullable().default(null),
          expires: z.object({ ttl: z.number().int().positive(), timeframe: z.enum(['year', 'month', 'day']) }).strict().nullable().default(null),
          activations: z.object({ limit: z.number().int().positive(), enable_customer_admin: z.boolean() }).strict().nullable().default(null),
          limit_usage: z.number().int().positive().nullable().default(null),
        })
        .strict()
        .default({ prefix: null, expires: null, activations: null, limit_usage: null }),
    })
    .strict(),
  z
    .object({
      ...BenefitBase,
      type: z.literal('meter_credit'),
      properties: z.object({ units: z.number().int().positive(), rollover: z.boolean().default(false), meter: Ref('meter') }).strict(),
    })
    .strict(),
]);
export type Benefit = z.infer<typeof Benefit>;

const PriceCommon = { price_currency: Currency.default('usd'), tax_behavior: z.enum(['location', 'inclusive', 'exclusive']).nullable().default(null) };
export const Price = z.discriminatedUnion('amount_type', [
  z.object({ ...PriceCommon, amount_type: z.literal('fixed'), price_amount: z.number().int().min(0).describe('In minor units: 1500 is 15.00') }).strict(),
  z.object({ ...PriceCommon, amount_type: z.literal('free') }).strict(),
  z
    .object({
      ...PriceCommon,
      amount_type: z.literal('custom'),
      minimum_amount: z.number().int().min(0).default(50),
      maximum_amount: z.number().int().min(0).nullable().default(null),
      preset_amount: z.number().int().min(0).nullable().default(null),
    })
    .strict(),
  z
    .object({
      ...PriceCommon,
      amount_type: z.literal('metered_unit'),
      meter: Ref('meter'),
      unit_amount: z.union([z.string(), z.number()]).describe('Per unit, in minor units, decimals allowed: "0.5"'),
      cap_amount: z.number().int().min(0).nullable().default(null),
    })
    .strict(),
]);
export type Price = z.infer<typeof Price>;

export const Product = z
  .object({
    key: Key,
    name: z.string().min(3).max(64),
    description: z.string().nullable().default(null),
    visibility: z.enum(['draft', 'private', 'public']).default('public'),
    recurring_interval: Interval.nullable().default(null).describe('month, year…; none for a one-time product'),
    recurring_interval_count: z.number().int().min(1).nullable().default(null),
    trial_interval: Interval.nullable().default(null),
    trial_interval_count: z.number().int().min(1).nullable().default(null),
    prices: z.array(Price).min(1).describe('Prices are never edited: a changed price is a new one, the old one archived'),
    benefits: z.array(Ref('benefit')).default([]),
    custom_fields: z.array(z.object({ field: Ref('custom field'), required: z.boolean().default(false) }).strict()).default([]),
    metadata: Metadata,
    migrate_subscriptions: z
      .boolean()
      .default(false)
      .describe('true: `till apply` moves the product’s subscriptions on an old (archived or changed) price onto its current fixed price in their currency; false: they stay on the price they have'),
    migration_proration_behavior: z
      .enum(['invoice', 'prorate'])
      .nullable()
      .default(null)
      .describe('How a migrated subscription’s rest of the period is billed: invoice (charged now) or prorate (on the next renewal); none: the organization’s setting'),
  })
  .strict();
export type Product = z.infer<typeof Product>;

export const Discount = z
  .object({
    key: Key,
    name: z.string().min(1).max(256),
    code: z.string().nullable().default(null),
    type: z.enum(['fixed', 'percentage']),
    amounts: z
      .record(Currency, z.number().int().min(0))
      .optional()
      .describe('fixed: the amount off in each currency, in minor units: {usd: 500, eur: 450}'),
    amount: z.number().int().min(0).optional().describe('fixed, in one currency (older files): the amount off, in minor units; amounts takes several'),
    currency: Currency.optional().describe('fixed, with amount: its currency'),
    basis_points: z.number().int().min(1).max(10_000).optional().describe('percentage: 1000 is 10 %'),
    duration: z.enum(['once', 'forever', 'repeating']),
    duration_in_months: z.number().int().min(1).nullable().default(null),
    max_redemptions: z.number().int().min(1).nullable().default(null),
    starts_at: z.string().nullable().default(null),
    ends_at: z.string().nullable().default(null),
    products: z.array(Ref('product')).default([]).describe('None: the discount applies to every product'),
    metadata: Metadata,
  })
  .strict()
  .refine((discount) => discount.amounts === undefined || discount.amount === undefined, { message: 'Give amounts, or amount with currency, not both', path: ['amounts'] });
export type Discount = z.infer<typeof Discount>;

export const Webhook = z
  .object({
    key: Key,
    url: z.string().url(),
    name: z.string().nullable().default(null),
    format: z.enum(['raw', 'discord', 'slack']).default('raw'),
    events: z.array(z.string()).default([]),
    enabled: z.boolean().default(true),
    secret: Secret.optional(),
  })
  .strict();
export type Webhook = z.infer<typeof Webhook>;

export const TaxRate = z
  .object({
    key: Key,
    country: z.string().regex(/^[A-Z]{2}$/, 'An ISO 3166-1 alpha-2 code such as DE'),
    state: z.string().nullable().default(null),
    basis_points: z.number().int().min(0).max(10_000),
  })
  .strict();
export type TaxRate = z.infer<typeof TaxRate>;

export const CatalogFile = z
  .object({
    $schema: z.string().optional(),
    version: z.literal(1).default(1),
    organization: OrganizationSettings.optional(),
    meters: z.array(Meter).default([]),
    custom_fields: z.array(CustomField).default([]),
    benefits: z.array(Benefit).default([]),
    products: z.array(Product).default([]),
    discounts: z.array(Discount).default([]),
    webhooks: z.array(Webhook).default([]),
    tax_rates: z.array(TaxRate).default([]),
  })
  .strict();
export type CatalogFile = z.infer<typeof CatalogFile>;

/** The JSON Schema of the file, for editors (tilld serves it; docs/catalog.schema.json holds a copy). */
export const catalogJsonSchema = () => ({
  ...z.toJSONSchema(CatalogFile, { io: 'input', unrepresentable: 'any' }),
  $id: 'https://till.dev/schemas/catalog.schema.json',
  title: 'Till catalog file',
});
