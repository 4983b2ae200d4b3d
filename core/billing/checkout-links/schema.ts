import { z } from 'zod';
import { INTERVALS, type Interval } from '../products/schema.js';
import { Metadata } from '../shared/metadata.js';

export const CHECKOUT_LINK_SORTING = ['created_at', 'label', 'success_url', 'allow_discount_codes'] as const;

/** Polar's prefix for a link's client secret (the token in its public URL). */
export const CHECKOUT_LINK_SECRET_PREFIX = 'polar_cl_';

const Url = z.url({ protocol: /^https?$/, error: 'Use an http(s) URL' }).max(2048);
const Label = z.string().max(256);
const TrialCount = z.number().int().min(1).max(1000);
// Checkouts in Till are not seat- or unit-locked (see CheckoutCreate): a link cannot promise what they cannot do.
const Unsupported = (what: string) => z.unknown().refine((value) => value === undefined || value === null, `${what} is not supported by Till`);

const trialTogether = (input: { trial_interval?: unknown; trial_interval_count?: unknown }, ctx: z.RefinementCtx) => {
  if (input.trial_interval === undefined && input.trial_interval_count === undefined) return;
  if ((input.trial_interval == null) !== (input.trial_interval_count == null)) {
    ctx.addIssue({ code: 'custom', path: ['trial_interval_count'], message: 'Give trial_interval and trial_interval_count together' });
  }
};

/**
 * POST /v1/checkout-links/ (Polar's CheckoutLinkCreate): the products offered (`products`), or the deprecated forms
 * with one product (`product_id`) or one price (`product_price_id`). The organization is the products'.
 */
export const CheckoutLinkCreate = z
  .object({
    payment_processor: z.literal('stripe'),
    products: z.array(z.uuid()).min(1).max(100).nullish(),
    product_id: z.uuid().nullish(),
    product_price_id: z.uuid().nullish(),
    label: Label.nullish(),
    allow_discount_codes: z.boolean().default(true),
    require_billing_address: z.boolean().default(false),
    discount_id: z.uuid().nullish(),
    seats: Unsupported('Seat-locked checkout links (seats)').optional(),
    units: Unsupported('Unit-locked checkout links (units)').optional(),
    trial_interval: z.enum(INTERVALS).nullish(),
    trial_interval_count: TrialCount.nullish(),
    success_url: Url.nullish(),
    return_url: Url.nullish(),
    metadata: Metadata.optional(),
  })
  .superRefine((input, ctx) => {
    if (!input.products?.length && !input.product_id && !input.product_price_id) {
      ctx.addIssue({ code: 'custom', path: ['products'], message: 'Field required: at least one product' });
    }
    trialTogether(input, ctx);
  });
export type CheckoutLinkCreate = z.infer<typeof CheckoutLinkCreate>;

/**
 * PATCH /v1/checkout-links/{id} (Polar's CheckoutLinkUpdate). A key left out keeps its value; `null` clears the
 * label, discount, trial and URLs; `products` given replaces the list.
 */
export const CheckoutLinkUpdate = z
  .object({
    products: z.array(z.uuid()).min(1).max(100).nullish(),
    label: Label.nullish(),
    allow_discount_codes: z.boolean().nullish(),
    require_billing_address: z.boolean().nullish(),
    discount_id: z.uuid().nullish(),
    seats: Unsupported('Seat-locked checkout links (seats)').optional(),
    units: Unsupported('Unit-locked checkout links (units)').optional(),
    trial_interval: z.enum(INTERVALS).nullish(),
    trial_interval_count: TrialCount.nullish(),
    success_url: Url.nullish(),
    return_url: Url.nullish(),
    metadata: Metadata.optional(),
  })
  .superRefine(trialTogether);
export type CheckoutLinkUpdate = z.infer<typeof CheckoutLinkUpdate>;

export interface CheckoutLink {
  id: string;
  organizationId: string;
  clientSecret: string;
  label: string | null;
  allowDiscountCodes: boolean;
  requireBillingAddress: boolean;
  discountId: string | null;
  trialInterval: Interval | null;
  trialIntervalCount: number | null;
  successUrl: string | null;
  returnUrl: string | null;
  metadata: Metadata;
  /** The products offered, in order. */
  productIds: string[];
  createdAt: Date;
  modifiedAt: Date | null;
}
