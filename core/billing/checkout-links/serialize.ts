import { serializeCheckoutProduct } from '../checkouts/serialize.js';
import { serializeDiscountMinimal } from '../discounts/serialize.js';
import { serializePrice } from '../products/serialize.js';
import type { CheckoutLinkView } from './service.js';

/** The link's public URL: following it opens a fresh checkout (Polar's CHECKOUT_BASE_URL). */
export const checkoutLinkUrl = (baseUrl: string, clientSecret: string) => `${baseUrl.replace(/\/$/, '')}/v1/checkout-links/${clientSecret}/redirect`;


/**
 * Polar's CheckoutLink (the one place its wire shape is written). Like Polar, it still carries the deprecated
 * `product_id`, `product_price_id`, `product` and `product_price` of the first product, outside the schema.
 */
export function serializeCheckoutLink(link: CheckoutLinkView, baseUrl: string) {
  const products = link.products.map((product) => serializeCheckoutProduct(product, baseUrl));
  const first = link.products[0];
  return {
    id: link.id,
    created_at: link.createdAt.toISOString(),
    modified_at: link.modifiedAt?.toISOString() ?? null,
    trial_interval: link.trialInterval,
    trial_interval_count: link.trialIntervalCount,
    metadata: link.metadata,
    payment_processor: 'stripe' as const,
    client_secret: link.clientSecret,
    success_url: link.successUrl,
    return_url: link.returnUrl,
    label: link.label,
    allow_discount_codes: link.allowDiscountCodes,
    require_billing_address: link.requireBillingAddress,
    discount_id: link.discountId,
    seats: null,
    units: null,
    organization_id: link.organizationId,
    products,
    discount: link.discount ? serializeDiscountMinimal(link.discount) : null,
    url: checkoutLinkUrl(baseUrl, link.clientSecret),
    product_id: first?.id ?? null,
    product_price_id: first?.prices[0]?.id ?? null,
    product: products[0] ?? null,
    product_price: first?.prices[0] ? serializePrice(first.prices[0], first) : null,
  };
}
export type CheckoutLinkWire = ReturnType<typeof serializeCheckoutLink>;
