import type { Address } from '../customers/address.js';
import type { StoredDiscount } from '../discounts/schema.js';
import { serializeDiscountTerms } from '../discounts/serialize.js';
import { serializeCustomField } from '../custom-fields/serialize.js';
import { serializeFile } from '../files/serialize.js';
import { serializePrice, serializeProductBase } from '../products/serialize.js';
import type { Product } from '../products/schema.js';
import { isFreePrice } from './pricing.js';
import type { Checkout } from './schema.js';

const serializeAddress = (address: Address) => ({
  line1: address.line1 ?? null,
  line2: address.line2 ?? null,
  postal_code: address.postal_code ?? null,
  city: address.city ?? null,
  state: address.state ?? null,
  country: address.country,
});

/** A product as a checkout shows it: current prices, public benefit fields only (never a benefit's properties). */
export function serializeCheckoutProduct(product: Product, baseUrl: string) {
  return {
    ...serializeProductBase(product),
    prices: product.prices.map((price) => serializePrice(price, product)),
    benefits: product.benefits.map((benefit) => ({
      id: benefit.id,
      created_at: benefit.createdAt.toISOString(),
      modified_at: benefit.modifiedAt?.toISOString() ?? null,
      type: benefit.type,
      description: benefit.description,
      selectable: benefit.selectable,
      deletable: benefit.deletable,
      is_deleted: benefit.deletedAt !== null,
      organization_id: benefit.organizationId,
    })),
    medias: product.medias.map((file) => serializeFile(file, baseUrl)),
  };
}

/** Polar's CheckoutDiscount*: the terms without the restriction lists. */
function serializeCheckoutDiscount(discount: StoredDiscount) {
  return {
    id: discount.id,
    name: discount.name,
    code: discount.code,
    duration: discount.duration,
    ...(discount.duration === 'repeating' ? { duration_in_months: discount.durationInMonths } : {}),
    type: discount.type,
    ...serializeDiscountTerms(discount),
  };
}

/** The flags Polar derives from the amounts and the price; never stored. */
export function checkoutFlags(checkout: Checkout) {
  const isFreeProductPrice = isFreePrice(checkout.productPrice);
  const trialing = checkout.trialEnd !== null;
  const isPaymentRequired = checkout.amounts.totalAmount > 0 && !trialing;
  // A subscription that will charge later needs a method saved now, even when nothing is charged today.
  const isPaymentSetupRequired = checkout.product.recurringInterval !== null && !isFreeProductPrice && checkout.amounts.totalAmount > 0;
  return {
    isFreeProductPrice,
    isDiscountApplicable: !isFreeProductPrice,
    isPaymentRequired,
    isPaymentSetupRequired,
    isPaymentFormRequired: isPaymentRequired || isPaymentSetupRequired,
  };
}

type FieldMode = 'required' | 'optional' | 'disabled';

/**
 * Which billing address fields the form asks for. The country always (tax follows it); the full address when the
 * seller requires it or the customer buys as a business; otherwise the state and postal code are optional.
 */
export function billingAddressFields(checkout: Pick<Checkout, 'requireBillingAddress' | 'isBusinessCustomer' | 'customerBillingAddress'>): Record<'country' | 'state' | 'city' | 'postal_code' | 'line1' | 'line2', FieldMode> {
  const full = checkout.requireBillingAddress || checkout.isBusinessCustomer;
  const country = checkout.customerBillingAddress?.country;
  const stateMode: FieldMode = country === 'US' || country === 'CA' ? 'required' : full ? 'optional' : 'optional';
  return {
    country: 'required',
    state: full ? stateMode : 'optional',
    city: full ? 'required' : 'disabled',
    postal_code: full ? 'required' : 'optional',
    line1: full ? 'required' : 'disabled',
    line2: full ? 'optional' : 'disabled',
  };
}

/**
 * Polar's deprecated `customer_billing_address_fields` (which fields are required, as booleans), still sent beside
 * `billing_address_fields` though left out of its OpenAPI documents: clients on older SDKs (@polar-sh/sdk 0.32, which
 * @polar-sh/express pins) require it.
 */
function customerBillingAddressFields(modes: ReturnType<typeof billingAddressFields>) {
  return {
    country: true,
    state: modes.state === 'required',
    city: modes.city === 'required',
    postal_code: modes.postal_code === 'required',
    line1: modes.line1 === 'required',
    line2: false,
  };
}

/** The fields Checkout and CheckoutPublic share. */
function commonFields(checkout: Checkout, baseUrl: string) {
  const flags = checkoutFlags(checkout);
  const addressFields = billingAddressFields(checkout);
  return {
    id: checkout.id,
    created_at: checkout.createdAt.toISOString(),
    modified_at: checkout.modifiedAt?.toISOString() ?? null,
    custom_field_data: checkout.customFieldData,
    // The SDK knows one processor name; Till's sandbox answers under it (see docs/checkouts.md).
    payment_processor: 'stripe' as const,
    status: checkout.status,
    client_secret: checkout.clientSecret,
    url: checkoutUrl(baseUrl, checkout.clientSecret),
    expires_at: checkout.expiresAt.toISOString(),
    // Polar fills its `{CHECKOUT_ID}` placeholder in whenever it reads the URL out.
    success_url: checkout.successUrl?.replaceAll('{CHECKOUT_ID}', checkout.id) ?? `${checkoutUrl(baseUrl, checkout.clientSecret)}/confirmation`,
    return_url: checkout.returnUrl,
    embed_origin: checkout.embedOrigin,
    amount: checkout.amounts.subtotalAmount,
    discount_amount: checkout.amounts.discountAmount,
    net_amount: checkout.amounts.netAmount,
    tax_amount: checkout.amounts.taxAmount,
    tax_behavior: 'exclusive' as const,
    total_amount: checkout.amounts.totalAmount,
    currency: checkout.currency,
    allow_trial: checkout.allowTrial,
    active_trial_interval: checkout.activeTrialInterval,
    active_trial_interval_count: checkout.activeTrialIntervalCount,
    trial_end: checkout.trialEnd?.toISOString() ?? null,
    organization_id: checkout.organizationId,
    product_id: checkout.productId,
    product_price_id: checkout.productPriceId,
    discount_id: checkout.discountId,
    allow_discount_codes: checkout.allowDiscountCodes,
    require_billing_address: checkout.requireBillingAddress,
    is_discount_applicable: flags.isDiscountApplicable,
    is_free_product_price: flags.isFreeProductPrice,
    is_payment_required: flags.isPaymentRequired,
    is_payment_setup_required: flags.isPaymentSetupRequired,
    is_payment_form_required: flags.isPaymentFormRequired,
    customer_id: checkout.customerId,
    is_business_customer: checkout.isBusinessCustomer,
    // No unit-based pricing, and the payment form does not report a method type.
    units: null,
    min_units: null,
    max_units: null,
    payment_method_type: null,
    customer_name: checkout.customerName,
    customer_email: checkout.customerEmail,
    customer_ip_address: checkout.customerIpAddress,
    customer_billing_name: checkout.customerBillingName,
    customer_billing_address: checkout.customerBillingAddress ? serializeAddress(checkout.customerBillingAddress) : null,
    customer_tax_id: checkout.customerTaxId,
    locale: checkout.locale,
    payment_processor_metadata: { processor: 'sandbox' } as Record<string, string>,
    customer_billing_address_fields: customerBillingAddressFields(addressFields),
    billing_address_fields: addressFields,
    products: checkout.products.map((product) => serializeCheckoutProduct(product, baseUrl)),
    product: serializeCheckoutProduct(checkout.product, baseUrl),
    product_price: serializePrice(checkout.productPrice, checkout.product),
    prices: Object.fromEntries(checkout.products.map((product) => [product.id, product.prices.map((price) => serializePrice(price, product))])),
    discount: checkout.discount ? serializeCheckoutDiscount(checkout.discount) : null,
    attached_custom_fields: checkout.product.attachedCustomFields.map((attached) => ({
      custom_field_id: attached.customField.id,
      custom_field: serializeCustomField(attached.customField),
      order: attached.order,
      required: attached.required,
    })),
  };
}

/** The hosted page of a checkout. */
export const checkoutUrl = (baseUrl: string, clientSecret: string) => `${baseUrl.replace(/\/$/, '')}/checkout/${clientSecret}`;

/** Polar's Checkout (the seller's view; also the data of checkout.created/updated events). */
export function serializeCheckout(checkout: Checkout, baseUrl: string) {
  return {
    ...commonFields(checkout, baseUrl),
    trial_interval: checkout.trialInterval,
    trial_interval_count: checkout.trialIntervalCount,
    metadata: checkout.metadata,
    external_customer_id: checkout.externalCustomerId,
    // Polar's deprecated name for it, still sent (outside its OpenAPI documents); SDK 0.32 requires it.
    customer_external_id: checkout.externalCustomerId,
    subscription_id: checkout.subscriptionId,
    customer_metadata: checkout.customerMetadata,
  };
}
export type CheckoutWire = ReturnType<typeof serializeCheckout>;

/** Polar's CheckoutPublic: what the customer's browser may see (no metadata), with the selling organization. */
export function serializeCheckoutPublic(checkout: Checkout, baseUrl: string) {
  const { organization } = checkout;
  return {
    ...commonFields(checkout, baseUrl),
    organization: {
      created_at: organization.createdAt.toISOString(),
      modified_at: organization.modifiedAt?.toISOString() ?? null,
      id: organization.id,
      name: organization.name,
      slug: organization.slug,
      avatar_url: organization.avatarUrl,
      proration_behavior: organization.settings.subscription_settings.proration_behavior,
      allow_customer_updates: organization.settings.subscription_settings.allow_customer_updates,
    },
  };
}

/**
 * Polar's CheckoutPublicConfirmed, the answer of a confirmation. The SDK accepts only status `confirmed` here;
 * Till takes the payment before answering, so the checkout is already succeeded by then: a GET shows it.
 */
export function serializeCheckoutConfirmed(checkout: Checkout, baseUrl: string) {
  return { ...serializeCheckoutPublic(checkout, baseUrl), status: 'confirmed' as const, customer_session_token: null };
}
