import { z } from 'zod';
import { Text } from '../customers/address.js';
import { Metadata } from '../shared/metadata.js';

export const REFUND_REASONS = ['duplicate', 'fraudulent', 'customer_request', 'service_disruption', 'satisfaction_guarantee', 'dispute_prevention', 'other'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

export const REFUND_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

export const REFUND_SORTING = ['created_at', 'amount'] as const;

/**
 * A refund is created pending, then the processor's answer settles it. A succeeded refund can still fail late
 * (the card was closed: the processor says so by an event); the amount then goes back to the order.
 */
export const REFUND_TRANSITIONS: Readonly<Record<RefundStatus, readonly RefundStatus[]>> = {
  pending: ['succeeded', 'failed', 'canceled'],
  succeeded: ['failed'],
  failed: [],
  canceled: [],
};

export const canRefundTransition = (from: RefundStatus, to: RefundStatus): boolean => REFUND_TRANSITIONS[from].includes(to);

/** POST /v1/refunds, as Polar's RefundCreate. `amount` is the net amount (before tax) in minor units. */
export const RefundCreate = z.object({
  order_id: z.string().min(1),
  reason: z.enum(REFUND_REASONS),
  amount: z.number().int().min(1, 'Amount must be at least 1 (minor units)').max(999_999_999_999),
  comment: Text.max(1000).nullish(),
  revoke_benefits: z.boolean().optional(),
  metadata: Metadata.optional(),
});
export type RefundCreate = z.infer<typeof RefundCreate>;

export interface Refund {
  id: string;
  organizationId: string;
  orderId: string;
  subscriptionId: string | null;
  customerId: string;
  paymentId: string | null;
  status: RefundStatus;
  reason: RefundReason;
  amount: number;
  taxAmount: number;
  currency: string;
  comment: string | null;
  revokeBenefits: boolean;
  processorRefundId: string | null;
  failureReason: string | null;
  metadata: Metadata;
  createdAt: Date;
  modifiedAt: Date | null;
}

export interface RefundFilter {
  organizationIds: readonly string[];
  ids?: readonly string[];
  orderIds?: readonly string[];
  subscriptionIds?: readonly string[];
  customerIds?: readonly string[];
  externalCustomerIds?: readonly string[];
  succeeded?: boolean;
}
