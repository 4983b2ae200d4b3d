import { z } from 'zod';
import { AddressInput, Text, type Address } from '../customers/address.js';
import { ExternalId } from '../customers/schema.js';
import type { Customer } from '../customers/schema.js';
import type { StoredDiscount } from '../discounts/schema.js';
import type { Organization } from '../organizations/schema.js';
import type { Price, Product } from '../products/schema.js';
import { INTERVALS, type Interval } from '../products/schema.js';
import { CURRENCIES } from '../shared/currencies.js';
import { Metadata } from '../shared/metadata.js';
import type { Amounts } from '../pricing/amounts.js';

export const CHECKOUT_STATUSES = ['open', 'expired', 'confirmed', 'succeeded', 'failed'] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];
export const CHECKOUT_SORTING = ['created_at', 'expires_at', 'status'] as const;

/** How long a new checkout stays open unless paid first: 24 hours, Polar's CHECKOUT_TTL_SECONDS. */
export const CHECKOUT_TTL_MS = 24 * 60 * 60 * 1000;

const Email = Text.trim().pipe(z.email({ error: 'Not a valid email address' }).max(320));
const Name = Text.trim().max(256);
const Url = z.url({ protocol: /^https?$/, error: 'Use an http(s) URL' }).max(2048);
const Amount = z.number().int().min(0).max(99_999_999);
/** A custom field's value: text, number, boolean, or a date as text; null clears it. */
const CustomFieldData = z.record(z.string().max(100), z.union([z.string().max(10_000), z.number(), z.boolean(), z.null()])).refine((data) => Object.keys(data).length <= 100, 'At most 100 fields');
const CustomerMetadata = z.record(z.string().max(40), z.union([z.string().max(500), z.number(), z.boolean()])).refine((data) => Object.keys(data).length <= 50, 'At most 50 keys');
const TaxIdValue = Text.trim().min(1).max(64);
const Locale = Text.trim().max(35);
const Unsupported = (what: string) => z.unknown().refine((value) => value === undefined || value === null, `${what} is not supported by Till`);

/** The customer fields a checkout is created or updated with. */
const CustomerFields = {
  customer_name: Name.nullish(),
  customer_email: Email.nullish(),
  customer_billing_name: Name.nullish(),
  customer_billing_address: AddressInput.nullish(),
  customer_tax_id: TaxIdValue.nullish(),
  is_business_customer: z.boolean().nullish(),
  locale: Locale.nullish(),
};

/**
 * POST /v1/checkouts/ (Polar's CheckoutCreate): the products offered (the first is selected), or one price
 * (`product_price_id`, the legacy form). Ad hoc prices, seats and subscription upgrades are refused clearly.
 */
export const CheckoutCreate = z
  .object({
    products: z.array(z.uuid()).max(100).nullish(),
    product_id: z.uuid().nullish(),
    product_price_id: z.uuid().nullish(),
    prices: Unsupported('Ad hoc prices (prices)').optional(),
    seats: Unsupported('Seat-based checkouts (seats)').optional(),
    min_seats: Unsupported('min_seats').optional(),
    max_seats: Unsupported('max_seats').optional(),
    subscription_id: Unsupported('Upgrading a subscription through a checkout (subscription_id)').optional(),
    amount: Amount.nullish(),
    currency: z.enum(CURRENCIES).nullish(),
    discount_id: z.uuid().nullish(),
    allow_discount_codes: z.boolean().default(true),
    require_billing_address: z.boolean().default(false),
    allow_trial: z.boolean().default(true),
    trial_interval: z.enum(INTERVALS).nullish(),
    trial_interval_count: z.number().int().min(1).max(1000).nullish(),
    customer_id: z.uuid().nullish(),
    external_customer_id: ExternalId.nullish(),
    customer_ip_address: z.union([z.ipv4(), z.ipv6()]).nullish(),
    customer_metadata: CustomerMetadata.optional(),
    ...CustomerFields,
    success_url: Url.nullish(),
    return_url: Url.nullish(),
    embed_origin: Url.nullish(),
    metadata: Metadata.optional(),
    custom_field_data: CustomFieldData.optional(),
    organization_id: z.string().min(1).nullish(),
  })
  .superRefine((input, ctx) => {
    if (!input.products?.length && !input.product_price_id && !input.product_id) {
      ctx.addIssue({ code: 'custom', path: ['products'], message: 'Field required: at least one product' });
    }
    if ((input.trial_interval == null) !== (input.trial_interval_count == null)) {
      ctx.addIssue({ code: 'custom', path: ['trial_interval_count'], message: 'Give trial_interval and trial_interval_count together' });
    }
  });
export type CheckoutCreate = z.infer<typeof CheckoutCreate>;

/** What a customer may change on an open checkout (Polar's CheckoutUpdatePublic), credential-less. */
export const CheckoutUpdatePublic = z.object({
  product_id: z.uuid().nullish(),
  product_price_id: z.uuid().nullish(),
  amount: Amount.nullish(),
  seats: Unsupported('Seat-based checkouts (seats)').optional(),
  ...CustomerFields,
  discount_code: z.string().trim().max(256).nullish(),
  allow_trial: z.literal(false).nullish(),
  custom_field_data: CustomFieldData.optional(),
});
export type CheckoutUpdatePublic = z.infer<typeof CheckoutUpdatePublic>;

/** POST /v1/checkouts/client/{client_secret}/confirm: the last update, and a test token instead of a card form. */
export const CheckoutConfirm = CheckoutUpdatePublic.extend({
  confirmation_token_id: z.string().trim().min(1).max(255).nullish(),
});
export type CheckoutConfirm = z.infer<typeof CheckoutConfirm>;

/** PATCH /v1/checkouts/{id} (Polar's CheckoutUpdate): what the seller may change while the checkout is open. */
export const CheckoutUpdate = z
  .object({
    product_id: z.uuid().nullish(),
    product_price_id: z.uuid().nullish(),
    amount: Amount.nullish(),
    seats: Unsupported('Seat-based checkouts (seats)').optional(),
    currency: z.enum(CURRENCIES).nullish(),
    ...CustomerFields,
    customer_ip_address: z.union([z.ipv4(), z.ipv6()]).nullish(),
    customer_metadata: CustomerMetadata.nullish(),
    discount_id: z.uuid().nullish(),
    allow_discount_codes: z.boolean().nullish(),
    require_billing_address: z.boolean().nullish(),
    allow_trial: z.boolean().nullish(),
    trial_interval: z.enum(INTERVALS).nullish(),
    trial_interval_count: z.number().int().min(1).max(1000).nullish(),
    metadata: Metadata.optional(),
    custom_field_data: CustomFieldData.optional(),
    success_url: Url.nullish(),
    return_url: Url.nullish(),
    embed_origin: Url.nullish(),
  });
export type CheckoutUpdate = z.infer<typeof CheckoutUpdate>;

export type CustomFieldValue = string | number | boolean | null;

/** A checkout's own row. Amounts are those computeAmounts gave at the last change. */
export interface StoredCheckout {
  id: string;
  organizationId: string;
  status: CheckoutStatus;
  clientSecret: string;
  expiresAt: Date;
  successUrl: string | null;
  returnUrl: string | null;
  embedOrigin: string | null;
  productIds: string[];
  productId: string;
  productPriceId: string;
  currency: string;
  customAmount: number | null;
  amounts: Amounts;
  discountId: string | null;
  discountClaimed: boolean;
  allowDiscountCodes: boolean;
  requireBillingAddress: boolean;
  allowTrial: boolean;
  trialInterval: Interval | null;
  trialIntervalCount: number | null;
  customerId: string | null;
  externalCustomerId: string | null;
  customerName: string | null;
  customerEmail: string | null;
  customerIpAddress: string | null;
  customerBillingName: string | null;
  customerBillingAddress: Address | null;
  customerTaxId: string | null;
  isBusinessCustomer: boolean;
  customerMetadata: Record<string, string | number | boolean>;
  customFieldData: Record<string, CustomFieldValue>;
  metadata: Metadata;
  locale: string | null;
  subscriptionId: string | null;
  orderId: string | null;
  paymentId: string | null;
  createdAt: Date;
  modifiedAt: Date | null;
}

/** A checkout with everything it is shown with: products, the selected price, the discount, the organization. */
export interface Checkout extends StoredCheckout {
  products: Product[];
  product: Product;
  productPrice: Price;
  discount: StoredDiscount | null;
  organization: Organization;
  customer: Customer | null;
  /** When a trial taken now would end (null: no trial applies). */
  trialEnd: Date | null;
  activeTrialInterval: Interval | null;
  activeTrialIntervalCount: number | null;
}
