import { serializeCustomer } from '../customers/serialize.js';
import { isClosedDispute, isResolvedDispute } from './schema.js';
import type { DisputeView } from './service.js';

/** The Dispute of Polar's API (the one place its wire shape is written). */
export function serializeDispute(dispute: DisputeView) {
  return {
    created_at: dispute.createdAt.toISOString(),
    modified_at: dispute.modifiedAt?.toISOString() ?? null,
    id: dispute.id,
    status: dispute.status,
    resolved: isResolvedDispute(dispute.status),
    closed: isClosedDispute(dispute.status),
    amount: dispute.amount,
    tax_amount: dispute.taxAmount,
    currency: dispute.currency,
    reason: dispute.reason,
    evidence_due_by: dispute.evidenceDueBy?.toISOString() ?? null,
    past_due: dispute.pastDue,
    order_id: dispute.orderId,
    payment_id: dispute.paymentId,
    customer: serializeCustomer(dispute.customer),
    case_id: null,
  };
}
