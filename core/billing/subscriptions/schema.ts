import { z } from 'zod';
import type { Metadata } from '../shared/metadata.js';

export const SUBSCRIPTION_STATUSES = ['incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'canceled', 'unpaid'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** Statuses in which a subscription still grants its benefits and is billed (Polar's `active` filter). */
export const BILLABLE_STATUSES: readonly SubscriptionStatus[] = ['trialing', 'active', 'past_due'];
export const ACTIVE_STATUSES: readonly SubscriptionStatus[] = ['trialing', 'active'];

export const CANCELLATION_REASONS = ['customer_service', 'low_quality', 'missing_features', 'switched_service', 'too_complex', 'too_expensive', 'unused', 'other'] as const;
export type CancellationReason = (typeof CANCELLATION_REASONS)[number];

export const SUBSCRIPTION_INTERVALS = ['day', 'week', 'month', 'year'] as const;
export type SubscriptionInterval = (typeof SUBSCRIPTION_INTERVALS)[number];

export const PRORATION_BEHAVIORS = ['invoice', 'prorate'] as const;
export type ProrationBehavior = (typeof PRORATION_BEHAVIORS)[number];

export const SUBSCRIPTION_SORTING = ['customer', 'status', 'started_at', 'current_period_end', 'ended_at', 'ends_at', 'amount', 'product', 'discount', 'created_at'] as const;

/** A charge or credit waiting for the next renewal order (a plan change with proration `prorate`). */
export interface PendingItem {
  label: string;
  /** Negative for a credit. */
  amount: number;
  productPriceId: string | null;
}

/** A subscription as stored. */
export interface Subscription {
  id: string;
  organizationId: string;
  customerId: string;
  productId: string;
  discountId: string | null;
  checkoutId: string | null;
  paymentMethodId: string | null;
  status: SubscriptionStatus;
  /** What one period costs before discount and tax: the sum of its prices. */
  amount: number;
  currency: string;
  recurringInterval: SubscriptionInterval;
  recurringIntervalCount: number;
  /**
   * Periods are `billingAnchor + cycle × interval` to `billingAnchor + (cycle + 1) × interval`, so they never
   * drift. During a trial `cycle` is -1, the period is the trial, and the anchor is the trial's end.
   */
  billingAnchor: Date;
  cycle: number;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  trialStart: Date | null;
  trialEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  canceledAt: Date | null;
  startedAt: Date | null;
  endsAt: Date | null;
  endedAt: Date | null;
  pastDueAt: Date | null;
  /** Failed renewal charges of the current period (the dunning schedule's position). */
  dunningAttempts: number;
  /** The order being charged (a renewal or a plan change) until it is paid; null when nothing is owed. */
  dunningOrderId: string | null;
  /** Start of the first period the discount applies to (`once` and `repeating` count from here). */
  discountStart: Date | null;
  customerCancellationReason: CancellationReason | null;
  customerCancellationComment: string | null;
  pendingItems: PendingItem[];
  metadata: Metadata;
  customFieldData: Record<string, unknown>;
  priceIds: string[];
  createdAt: Date;
  modifiedAt: Date | null;
}

const Reason = z.enum(CANCELLATION_REASONS).nullish();
const Comment = z.string().max(10_000).nullish();

/** PATCH body forms of Polar's SubscriptionUpdate that Till takes, told apart by their fields. */
export const SubscriptionCancel = z.strictObject({
  cancel_at_period_end: z.boolean(),
  customer_cancellation_reason: Reason,
  customer_cancellation_comment: Comment,
});
export const SubscriptionRevoke = z.strictObject({
  revoke: z.literal(true),
  customer_cancellation_reason: Reason,
  customer_cancellation_comment: Comment,
});
export const SubscriptionUpdateProduct = z.strictObject({
  product_id: z.string().min(1),
  proration_behavior: z.enum(PRORATION_BEHAVIORS).nullish(),
  discount_id: z.undefined().optional(),
});
export const SubscriptionUpdateDiscount = z.strictObject({
  discount_id: z.string().min(1).nullable(),
});

export type SubscriptionCancel = z.infer<typeof SubscriptionCancel>;
export type SubscriptionRevoke = z.infer<typeof SubscriptionRevoke>;
export type SubscriptionUpdateProduct = z.infer<typeof SubscriptionUpdateProduct>;
export type SubscriptionUpdateDiscount = z.infer<typeof SubscriptionUpdateDiscount>;

export type SubscriptionUpdate =
  | ({ kind: 'cancel' } & SubscriptionCancel)
  | ({ kind: 'revoke' } & SubscriptionRevoke)
  | ({ kind: 'product' } & SubscriptionUpdateProduct)
  | ({ kind: 'discount' } & SubscriptionUpdateDiscount);

/**
 * PATCH /v1/subscriptions/{id}: which form a body is, by the fields it carries (Polar's SubscriptionUpdate union).
 * A body that matches none is a 422 naming what each form needs.
 */
export const SubscriptionUpdate = z
  // The union documents the four forms (OpenAPI); the dispatcher below validates, naming the field at fault.
  .union([SubscriptionCancel, SubscriptionRevoke, SubscriptionUpdateProduct, SubscriptionUpdateDiscount])
  .catch((ctx) => ctx.input as never)
  .pipe(z.any().transform((body: unknown, ctx): SubscriptionUpdate => {
    const record = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const forms = [
      ['revoke', 'revoke', SubscriptionRevoke],
      ['cancel_at_period_end', 'cancel', SubscriptionCancel],
      ['product_id', 'product', SubscriptionUpdateProduct],
      ['discount_id', 'discount', SubscriptionUpdateDiscount],
    ] as const;
    for (const [field, kind, schema] of forms) {
      if (!(field in record)) continue;
      const parsed = schema.safeParse(record);
      if (parsed.success) return { kind, ...parsed.data } as SubscriptionUpdate;
      for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
      return z.NEVER;
    }
    ctx.addIssue({
      code: 'custom',
      path: [],
      message: 'Give one of: {cancel_at_period_end}, {revoke: true}, {product_id, proration_behavior} or {discount_id}',
    });
    return z.NEVER;
  }),
);
