import { z } from 'zod';
import { CoreError, isCoreError } from '../../errors.js';
import { customFieldDataIssues } from '../checkouts/custom-field-data.js';
import type { Checkout, CheckoutCreate, CustomFieldValue } from '../checkouts/schema.js';
import { checkoutUrl } from '../checkouts/serialize.js';
import { createCheckout, type CheckoutDeps } from '../checkouts/service.js';
import type { AttachedCustomField } from '../products/schema.js';
import { findCheckoutLinkByClientSecret } from './repository.js';
import { checkoutLinkNotFound, invalidLink, viewOfLink } from './service.js';

/** The query keys that prefill the checkout: consumed, so not passed on to the checkout page. */
const PREFILL_KEYS = ['product_id', 'amount', 'customer_email', 'customer_name', 'discount_code', 'locale'] as const;
/** The query keys copied into the checkout's metadata (unless the link's metadata has the key). */
const METADATA_KEYS = ['reference_id', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;
const CUSTOM_FIELD_PREFIX = 'custom_field_data.';

/** A query value as one string; an empty one counts as absent (Polar's EmptyStrToNone). */
const one = (value: unknown): string | undefined => {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
};

const isEmail = (value: string) => z.email().max(320).safeParse(value.trim()).success;

/** A value from the query for a field of this type: numbers and checkboxes come as text in a URL. */
function fieldValue(attached: AttachedCustomField, raw: string): CustomFieldValue {
  if (attached.customField.type === 'number' && /^-?\d+$/.test(raw)) return Number(raw);
  if (attached.customField.type === 'checkbox' && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

/** `?embed_origin=` as an origin, or nothing when it is not an http(s) URL. */
function originOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

export interface OpenedCheckoutLink {
  checkout: Checkout;
  /** The hosted checkout page, with the query keys the link did not consume passed on. */
  location: string;
}

/**
 * GET /v1/checkout-links/{client_secret}/redirect: opens a fresh checkout with the link's products, discount,
 * trial, URLs and metadata, prefilled from the query as Polar does (`product_id` selects a product; `amount`,
 * `customer_email`, `customer_name`, `discount_code` and `custom_field_data.<slug>` are used when valid and ignored
 * otherwise; `reference_id` and `utm_*` land in the metadata). A deleted link answers 404; a link whose products are
 * all archived or drafts, 422.
 */
export async function openCheckoutLink(deps: CheckoutDeps, clientSecret: string, query: Record<string, unknown>, customerIpAddress: string | null): Promise<OpenedCheckoutLink> {
  const found = await findCheckoutLinkByClientSecret(deps.db, clientSecret);
  if (!found) throw checkoutLinkNotFound();
  const link = await viewOfLink(deps.db, found);
  const products = link.products.filter((product) => !product.isArchived && product.visibility !== 'draft');
  if (products.length === 0) throw invalidLink([{ loc: ['body', 'products'], msg: 'No valid products.', type: 'value_error' }]);

  const productId = one(query.product_id);
  if (productId !== undefined && !z.uuid().safeParse(productId).success) {
    throw new CoreError('invalid', 'INVALID_QUERY', 'product_id is not a UUID', [{ loc: ['query', 'product_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }]);
  }
  const selected = products.find((product) => product.id === productId) ?? products[0];

  const metadata = { ...link.metadata };
  for (const key of METADATA_KEYS) {
    const value = one(query[key]);
    if (value !== undefined && !(key in metadata)) metadata[key] = value.slice(0, 500);
  }

  // Custom field values for the selected product's fields, kept only when all of them are valid (as Polar does).
  const fields = new Map(selected.attachedCustomFields.map((attached) => [attached.customField.slug, attached]));
  const fieldData: Record<string, CustomFieldValue> = {};
  for (const [key, raw] of Object.entries(query)) {
    const value = one(raw);
    const attached = key.startsWith(CUSTOM_FIELD_PREFIX) ? fields.get(key.slice(CUSTOM_FIELD_PREFIX.length)) : undefined;
    if (attached && value !== undefined) fieldData[attached.customField.slug] = fieldValue(attached, value);
  }
  const customFieldData = Object.keys(fieldData).length && customFieldDataIssues(selected.attachedCustomFields, fieldData, { complete: false }).length === 0 ? fieldData : {};

  const email = one(query.customer_email);
  const rawAmount = one(query.amount);
  const amount = rawAmount === undefined ? undefined : Math.trunc(Number(rawAmount));
  const input: CheckoutCreate = {
    products: products.map((product) => product.id),
    discount_id: link.discountId,
    allow_discount_codes: link.allowDiscountCodes,
    require_billing_address: link.requireBillingAddress,
    allow_trial: true,
    trial_interval: link.trialInterval,
    trial_interval_count: link.trialIntervalCount,
    success_url: link.successUrl,
    return_url: link.returnUrl,
    embed_origin: originOf(one(query.embed_origin)),
    metadata,
    customer_email: email !== undefined && isEmail(email) ? email.trim() : undefined,
    customer_name: one(query.customer_name)?.slice(0, 256),
    customer_ip_address: customerIpAddress,
    custom_field_data: customFieldData,
    amount: amount !== undefined && Number.isSafeInteger(amount) && amount >= 0 ? amount : undefined,
    // Polar opens link checkouts in English unless the organization turned checkout localization on.
    locale: 'en',
  };
  const options = { selectProductId: selected.id, discountCode: one(query.discount_code), lenientDiscount: true };
  let checkout: Checkout;
  try {
    checkout = await createCheckout(deps, link.organizationId, input, options);
  } catch (error) {
    // An amount outside the price's bounds is ignored, as Polar ignores it: the checkout opens at the preset.
    const refusesTheAmount = isCoreError(error) && error.kind === 'invalid' && Array.isArray(error.details) && error.details.some((d: { loc: unknown[] }) => d.loc[1] === 'amount');
    if (!refusesTheAmount || input.amount === undefined) throw error;
    checkout = await createCheckout(deps, link.organizationId, { ...input, amount: undefined }, options);
  }

  const location = new URL(checkoutUrl(deps.baseUrl, checkout.clientSecret));
  for (const [key, raw] of Object.entries(query)) {
    const value = one(raw) ?? (typeof raw === 'string' ? raw : undefined);
    if (value === undefined || key === 'embed_origin' || (PREFILL_KEYS as readonly string[]).includes(key)) continue;
    if (key.startsWith(CUSTOM_FIELD_PREFIX) && key.slice(CUSTOM_FIELD_PREFIX.length) in customFieldData) continue;
    location.searchParams.set(key, value);
  }
  return { checkout, location: location.toString() };
}
