import { serializeProductBase } from '../products/serialize.js';
import { legacyAmount, type Discount, type DiscountTerms, type StoredDiscount } from './schema.js';

/**
 * A discount's terms as Polar writes them, in every API version: a fixed discount's `amounts` per currency and,
 * deprecated but still required by the SDKs, one `amount`/`currency` of them; a percentage one's `basis_points`.
 */
export function serializeDiscountTerms(discount: DiscountTerms & { organizationCurrency: string }) {
  if (discount.type === 'percentage') return { basis_points: discount.basisPoints };
  const amounts = Object.fromEntries(Object.entries(discount.amounts).sort(([a], [b]) => a.localeCompare(b)));
  return { ...legacyAmount(amounts, discount.organizationCurrency), amounts };
}

/**
 * The Discount of Polar's API (the one place its wire shape is written). The SDK tells the four shapes
 * apart by their fields: `duration_in_months` only when repeating; a fixed discount carries `amount`,
 * `currency` and `amounts` (all three required), a percentage one `basis_points`.
 */
export function serializeDiscount(discount: Discount) {
  return { ...serializeDiscountMinimal(discount), max_redemptions_per_customer: discount.maxRedemptionsPerCustomer, products: discount.products.map(serializeProductBase) };
}

/** Polar's DiscountMinimal: a discount without its product list (what a checkout link embeds). */
export function serializeDiscountMinimal(discount: StoredDiscount) {
  return {
    id: discount.id,
    created_at: discount.createdAt.toISOString(),
    modified_at: discount.modifiedAt?.toISOString() ?? null,
    metadata: discount.metadata,
    name: discount.name,
    code: discount.code,
    type: discount.type,
    duration: discount.duration,
    ...(discount.duration === 'repeating' ? { duration_in_months: discount.durationInMonths } : {}),
    ...serializeDiscountTerms(discount),
    starts_at: discount.startsAt?.toISOString() ?? null,
    ends_at: discount.endsAt?.toISOString() ?? null,
    max_redemptions: discount.maxRedemptions,
    redemptions_count: discount.redemptionsCount,
    organization_id: discount.organizationId,
  };
}
export type DiscountWire = ReturnType<typeof serializeDiscount>;
