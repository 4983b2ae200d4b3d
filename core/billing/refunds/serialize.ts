import type { Refund } from './schema.js';

/** The Refund of Polar's API (the one place its wire shape is written). Till has no disputes. */
export function serializeRefund(refund: Refund) {
  return {
    created_at: refund.createdAt.toISOString(),
    modified_at: refund.modifiedAt?.toISOString() ?? null,
    id: refund.id,
    metadata: refund.metadata,
    status: refund.status,
    reason: refund.reason,
    amount: refund.amount,
    tax_amount: refund.taxAmount,
    currency: refund.currency,
    organization_id: refund.organizationId,
    order_id: refund.orderId,
    subscription_id: refund.subscriptionId,
    customer_id: refund.customerId,
    revoke_benefits: refund.revokeBenefits,
    dispute: null,
  };
}
export type RefundWire = ReturnType<typeof serializeRefund>;
