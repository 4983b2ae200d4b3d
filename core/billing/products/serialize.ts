import { serializeBenefit } from '../benefits/serialize.js';
import { serializeCustomField } from '../custom-fields/serialize.js';
import { serializeFile } from '../files/serialize.js';
import type { Price, PriceTerms, Product, StoredProduct } from './schema.js';

function termFields(terms: PriceTerms) {
  switch (terms.amountType) {
    case 'fixed':
      return { amount_type: 'fixed' as const, price_amount: terms.priceAmount };
    case 'custom':
      return { amount_type: 'custom' as const, minimum_amount: terms.minimumAmount, maximum_amount: terms.maximumAmount, preset_amount: terms.presetAmount };
    case 'seat_based': {
      const { seat_tier_type, tiers } = terms.seatTiers;
      return {
        amount_type: 'seat_based' as const,
        seat_tiers: { seat_tier_type, tiers, minimum_seats: tiers[0].min_seats, maximum_seats: tiers[tiers.length - 1].max_seats },
        // Deprecated by Polar in favour of seat_tiers, still sent: the first tier's price.
        price_per_seat: tiers[0].price_per_seat,
      };
    }
    case 'metered_unit':
      return {
        amount_type: 'metered_unit' as const,
        unit_amount: terms.unitAmount,
        cap_amount: terms.capAmount,
        meter_id: terms.meterId,
        meter: { id: terms.meter.id, name: terms.meter.name, unit: terms.meter.unit, custom_label: terms.meter.customLabel, custom_multiplier: terms.meter.customMultiplier },
      };
  }
}

/**
 * Polar's ProductPrice, `amount_type` telling the shapes apart. A legacy recurring price carries
 * `legacy: true` with its own interval; a current one carries the deprecated `type` and
 * `recurring_interval` taken from its product, as Polar still sends them (the SDK ignores them).
 */
export function serializePrice(price: Price, product: Pick<StoredProduct, 'recurringInterval'>) {
  const common = {
    created_at: price.createdAt.toISOString(),
    modified_at: price.modifiedAt?.toISOString() ?? null,
    id: price.id,
    source: price.source,
    price_currency: price.priceCurrency,
    tax_behavior: price.taxBehavior,
    is_archived: price.isArchived,
    product_id: price.productId,
    ...termFields(price),
  };
  if (price.legacyRecurringInterval !== null) return { ...common, type: 'recurring' as const, recurring_interval: price.legacyRecurringInterval, legacy: true as const };
  return { ...common, type: product.recurringInterval === null ? ('one_time' as const) : ('recurring' as const), recurring_interval: product.recurringInterval };
}

/** A product's own fields, without what it links to: Polar's DiscountProduct, and the base of Product. */
export function serializeProductBase(product: StoredProduct) {
  return {
    id: product.id,
    created_at: product.createdAt.toISOString(),
    modified_at: product.modifiedAt?.toISOString() ?? null,
    trial_interval: product.trialInterval,
    trial_interval_count: product.trialIntervalCount,
    name: product.name,
    description: product.description,
    visibility: product.visibility,
    recurring_interval: product.recurringInterval,
    recurring_interval_count: product.recurringIntervalCount,
    meter_interval: product.meterInterval,
    meter_interval_count: product.meterIntervalCount,
    is_recurring: product.recurringInterval !== null,
    is_archived: product.isArchived,
    // Till archives products and never deletes them (products.delete is not served): none is deletable.
    is_deletable: false,
    organization_id: product.organizationId,
    metadata: product.metadata,
  };
}

/** Polar's Product (the one place its wire shape is written). `baseUrl` makes the media files' public URLs. */
export function serializeProduct(product: Product, baseUrl: string) {
  return {
    ...serializeProductBase(product),
    // A legacy product kept its interval on its prices.
    is_recurring: product.recurringInterval !== null || product.prices.some((price) => price.legacyRecurringInterval !== null),
    prices: product.prices.map((price) => serializePrice(price, product)),
    benefits: product.benefits.map(serializeBenefit),
    medias: product.medias.map((file) => serializeFile(file, baseUrl)),
    attached_custom_fields: product.attachedCustomFields.map((attached) => ({
      custom_field_id: attached.customField.id,
      custom_field: serializeCustomField(attached.customField),
      order: attached.order,
      required: attached.required,
    })),
  };
}
export type ProductWire = ReturnType<typeof serializeProduct>;
