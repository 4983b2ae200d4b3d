import { z } from 'zod';

/** Polar's dispute statuses; `prevented`, `won` and `lost` are closed, `won` and `lost` resolved. */
export const DISPUTE_STATUSES = ['prevented', 'early_warning', 'needs_response', 'under_review', 'lost', 'won'] as const;
export const DisputeStatus = z.enum(DISPUTE_STATUSES);
export type DisputeStatus = z.infer<typeof DisputeStatus>;

export const DISPUTE_SORTING = ['created_at', 'amount'] as const;

export interface Dispute {
  id: string;
  organizationId: string;
  orderId: string;
  paymentId: string;
  customerId: string;
  processor: string;
  processorDisputeId: string;
  status: DisputeStatus;
  reason: string | null;
  amount: number;
  taxAmount: number;
  currency: string;
  evidenceDueBy: Date | null;
  pastDue: boolean;
  createdAt: Date;
  modifiedAt: Date | null;
}

export interface DisputeFilter {
  organizationIds: readonly string[];
  orderIds?: readonly string[];
  statuses?: readonly DisputeStatus[];
}

export const isClosedDispute = (status: DisputeStatus) => status === 'prevented' || status === 'won' || status === 'lost';
export const isResolvedDispute = (status: DisputeStatus) => status === 'won' || status === 'lost';

/**
 * Which status may follow which. Stripe's own order (needs_response → under_review → won/lost, warnings before)
 * can arrive out of order through webhooks; a closed dispute never reopens.
 */
export const DISPUTE_TRANSITIONS: Readonly<Record<DisputeStatus, readonly DisputeStatus[]>> = {
  early_warning: ['needs_response', 'under_review', 'prevented', 'won', 'lost'],
  needs_response: ['under_review', 'won', 'lost'],
  under_review: ['needs_response', 'won', 'lost'],
  prevented: [],
  won: [],
  lost: [],
};
