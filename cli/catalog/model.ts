import type { Benefit, CatalogFile, CustomField, Discount, Meter, Price, Product, TaxRate, Webhook } from './schema.js';

/*
 * One vocabulary for both sides of a plan: what the file asks for and what the organization has are each
 * turned into entries of the same shape (the file's field names, references by key, defaults filled in), so
 * the diff compares like with like and `till pull` writes exactly what `till plan` reads back.
 */

export const KINDS = ['meter', 'custom_field', 'benefit', 'product', 'discount', 'webhook', 'tax_rate'] as const;
export type Kind = (typeof KINDS)[number];

/** The file's section of each kind. */
export const SECTION: Record<Kind, 'meters' | 'custom_fields' | 'benefits' | 'products' | 'discounts' | 'webhooks' | 'tax_rates'> = {
  meter: 'meters',
  custom_field: 'custom_fields',
  benefit: 'benefits',
  product: 'products',
  discount: 'discounts',
  webhook: 'webhooks',
  tax_rate: 'tax_rates',
};

/** An object as the file writes it: its key and fields (references are keys of other entries). */
export interface Entry {
  kind: Kind;
  key: string;
  fields: Record<string, unknown>;
  /** A product's subscriptions follow its current price (`migrate_subscriptions`): not a field of the object, never compared or pulled. */
  migrate?: { prorationBehavior: 'invoice' | 'prorate' | null };
}

export type ApiObject = Record<string, unknown>;

/** Maps ids to keys (reading the organization) and keys to ids (writing it). An unknown id stays the id. */
export interface Refs {
  keyOf(kind: Kind, id: string): string;
}

/** A price in its canonical form: `free` is a fixed price of 0, the unit amount a string, as tilld keeps them. */
export function normalPrice(price: Price): Record<string, unknown> {
  const common = { price_currency: price.price_currency, tax_behavior: price.tax_behavior };
  switch (price.amount_type) {
    case 'free':
      return { amount_type: 'fixed', price_amount: 0, ...common };
    case 'fixed':
      return { amount_type: 'fixed', price_amount: price.price_amount, ...common };
    case 'custom':
      return { amount_type: 'custom', minimum_amount: price.minimum_amount, maximum_amount: price.maximum_amount, preset_amount: price.preset_amount, ...common };
    case 'metered_unit':
      return { amount_type: 'metered_unit', meter: price.meter, unit_amount: canonicalDecimal(String(price.unit_amount)), cap_amount: price.cap_amount, ...common };
  }
}

/** "0.50" and "0.5" are one unit amount. */
const canonicalDecimal = (value: string) => (value.includes('.') ? value.replace(/0+$/, '').replace(/\.$/, '') : value);

/** An ISO timestamp in one spelling ("2026-01-01" and "2026-01-01T00:00:00Z" are the same instant). */
const instant = (value: unknown) => (typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : (value ?? null));

/** The entries a (parsed, environment-expanded) file asks for, in the order `apply` creates them. */
export function fileEntries(file: CatalogFile): Entry[] {
  const entries: Entry[] = [];
  const add = (kind: Kind, key: string, fields: Record<string, unknown>) => entries.push({ kind, key, fields });
  for (const meter of file.meters) add('meter', meter.key, meterFields(meter));
  for (const field of file.custom_fields) add('custom_field', field.key, { type: field.type, slug: field.slug, name: field.name, properties: field.properties, metadata: field.metadata });
  for (const benefit of file.benefits) add('benefit', benefit.key, benefitFields(benefit));
  for (const product of file.products) {
    add('product', product.key, productFields(product));
    if (product.migrate_subscriptions) entries[entries.length - 1].migrate = { prorationBehavior: product.migration_proration_behavior };
  }
  for (const discount of file.discounts) add('discount', discount.key, discountFields(discount));
  for (const webhook of file.webhooks) add('webhook', webhook.key, webhookFields(webhook));
  for (const rate of file.tax_rates) add('tax_rate', rate.key, { country: rate.country, state: rate.state, basis_points: rate.basis_points });
  return entries;
}

const meterFields = (meter: Meter) => ({
  name: meter.name,
  filter: meter.filter,
  aggregation: meter.aggregation,
  unit: meter.unit,
  custom_label: meter.custom_label,
  custom_multiplier: meter.custom_multiplier,
  metadata: meter.metadata,
});

const benefitFields = (benefit: Benefit) => ({ type: benefit.type, description: benefit.description, properties: benefit.properties, metadata: benefit.metadata });

function productFields(product: Product) {
  const recurring = product.recurring_interval !== null;
  return {
    name: product.name,
    description: product.description === '' ? null : product.description,
    visibility: product.visibility,
    recurring_interval: product.recurring_interval,
    // tilld counts one interval when none is given.
    recurring_interval_count: recurring ? (product.recurring_interval_count ?? 1) : null,
    trial_interval: product.trial_interval,
    trial_interval_count: product.trial_interval_count,
    prices: product.prices.map(normalPrice),
    benefits: product.benefits,
    custom_fields: product.custom_fields,
    metadata: product.metadata,
  };
}

/** A fixed discount's amounts per currency, keys in order: `amounts`, or an older file's one `amount` + `currency`. */
export function canonicalAmounts(amounts: unknown, amount: unknown, currency: unknown): Record<string, number> | null {
  const given = amounts && typeof amounts === 'object' ? (amounts as Record<string, number>) : typeof amount === 'number' ? { [typeof currency === 'string' ? currency : 'usd']: amount } : null;
  return given && Object.fromEntries(Object.entries(given).sort(([a], [b]) => a.localeCompare(b)));
}

function discountFields(discount: Discount) {
  const terms = discount.type === 'fixed' ? { amounts: canonicalAmounts(discount.amounts, discount.amount, discount.currency) } : { basis_points: discount.basis_points ?? null };
  return {
    name: discount.name,
    code: discount.code === '' ? null : discount.code,
    type: discount.type,
    ...terms,
    duration: discount.duration,
    duration_in_months: discount.duration === 'repeating' ? discount.duration_in_months : null,
    max_redemptions: discount.max_redemptions,
    starts_at: instant(discount.starts_at),
    ends_at: instant(discount.ends_at),
    products: discount.products,
    metadata: discount.metadata,
  };
}

function webhookFields(webhook: Webhook) {
  const fields: Record<string, unknown> = { url: webhook.url, name: webhook.name === '' ? null : webhook.name, format: webhook.format, events: [...new Set(webhook.events)], enabled: webhook.enabled };
  // A secret is managed only when the file names one (from the environment); `pull` never writes it.
  if (webhook.secret !== undefined) fields.secret = webhook.secret;
  return fields;
}

/** An object of the organization as an entry of the file's vocabulary (`key` given by the caller). */
export function serverFields(kind: Kind, object: ApiObject, refs: Refs): Record<string, unknown> {
  switch (kind) {
    case 'meter':
      return {
        name: object.name,
        filter: object.filter,
        aggregation: object.aggregation,
        unit: object.unit ?? 'scalar',
        custom_label: object.custom_label ?? null,
        custom_multiplier: object.custom_multiplier ?? null,
        metadata: object.metadata ?? {},
      };
    case 'custom_field':
      return { type: object.type, slug: object.slug, name: object.name, properties: object.properties ?? {}, metadata: object.metadata ?? {} };
    case 'benefit': {
      const properties = { ...(object.properties as ApiObject) };
      if (object.type === 'meter_credit') {
        const meter = refs.keyOf('meter', String(properties.meter_id));
        delete properties.meter_id;
        return { type: object.type, description: object.description, properties: { units: properties.units, rollover: properties.rollover, meter }, metadata: object.metadata ?? {} };
      }
      if (object.type === 'discord') delete properties.guild_id;
      if (object.type === 'downloadables') delete properties.archived;
      return { type: object.type, description: object.description, properties, metadata: object.metadata ?? {} };
    }
    case 'product':
      return {
        name: object.name,
        description: object.description ?? null,
        visibility: object.visibility ?? 'public',
        recurring_interval: object.recurring_interval ?? null,
        recurring_interval_count: object.recurring_interval ? (object.recurring_interval_count ?? 1) : null,
        trial_interval: object.trial_interval ?? null,
        trial_interval_count: object.trial_interval_count ?? null,
        prices: ((object.prices as ApiObject[]) ?? []).filter((price) => !price.is_archived).map((price) => serverPrice(price, refs)),
        benefits: ((object.benefits as ApiObject[]) ?? []).map((benefit) => refs.keyOf('benefit', String(benefit.id))),
        custom_fields: ((object.attached_custom_fields as ApiObject[]) ?? []).map((attached) => ({ field: refs.keyOf('custom_field', String(attached.custom_field_id)), required: attached.required === true })),
        metadata: object.metadata ?? {},
      };
    case 'discount': {
      const terms = object.type === 'fixed' ? { amounts: canonicalAmounts(object.amounts, object.amount, object.currency) } : { basis_points: object.basis_points };
      return {
        name: object.name,
        code: object.code ?? null,
        type: object.type,
        ...terms,
        duration: object.duration,
        duration_in_months: object.duration === 'repeating' ? (object.duration_in_months ?? null) : null,
        max_redemptions: object.max_redemptions ?? null,
        starts_at: instant(object.starts_at),
        ends_at: instant(object.ends_at),
        products: ((object.products as ApiObject[]) ?? []).map((product) => refs.keyOf('product', String(product.id))),
        metadata: object.metadata ?? {},
      };
    }
    case 'webhook':
      return { url: object.url, name: object.name ?? null, format: object.format, events: object.events ?? [], enabled: object.enabled !== false, secret: object.secret };
    case 'tax_rate':
      return { country: object.country, state: object.state ?? null, basis_points: object.basis_points };
  }
}

/** A price of the organization in the file's canonical form (see normalPrice). */
export function serverPrice(price: ApiObject, refs: Refs): Record<string, unknown> {
  const common = { price_currency: price.price_currency, tax_behavior: price.tax_behavior ?? null };
  switch (price.amount_type) {
    case 'custom':
      return { amount_type: 'custom', minimum_amount: price.minimum_amount, maximum_amount: price.maximum_amount ?? null, preset_amount: price.preset_amount ?? null, ...common };
    case 'metered_unit':
      return { amount_type: 'metered_unit', meter: refs.keyOf('meter', String(price.meter_id)), unit_amount: canonicalDecimal(String(price.unit_amount)), cap_amount: price.cap_amount ?? null, ...common };
    case 'fixed':
      return { amount_type: 'fixed', price_amount: price.price_amount, ...common };
    default:
      // seat_based and whatever comes later: compared whole, never written by a file.
      return { ...price, id: undefined, created_at: undefined, modified_at: undefined, product_id: undefined };
  }
}

/** The organization settings the file manages, read from the organization for the fields the file names. */
export function organizationFields(organization: ApiObject, named: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [field, wanted] of Object.entries(named)) {
    const current = organization[field];
    if (wanted && typeof wanted === 'object' && !Array.isArray(wanted) && current && typeof current === 'object') {
      fields[field] = Object.fromEntries(Object.keys(wanted).map((sub) => [sub, (current as ApiObject)[sub]]));
    } else {
      fields[field] = current ?? null;
    }
  }
  return fields;
}

export type { TaxRate, CustomField };
