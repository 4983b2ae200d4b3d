import type { Benefit } from '../benefits/schema.js';
import { serializeBenefit } from '../benefits/serialize.js';
import type { Customer } from '../customers/schema.js';
import { serializeCustomer } from '../customers/serialize.js';
import type { BenefitGrant } from './schema.js';

/** Polar's BenefitGrant (API answers, and the data of benefit_grant.* webhooks, which add previous_properties). */
export function serializeGrant(grant: BenefitGrant, customer: Customer, benefit: Benefit) {
  return {
    id: grant.id,
    created_at: grant.createdAt.toISOString(),
    modified_at: grant.modifiedAt?.toISOString() ?? null,
    granted_at: grant.grantedAt?.toISOString() ?? null,
    is_granted: grant.grantedAt !== null,
    revoked_at: grant.revokedAt?.toISOString() ?? null,
    is_revoked: grant.revokedAt !== null,
    subscription_id: grant.subscriptionId,
    order_id: grant.orderId,
    customer_id: grant.customerId,
    member_id: null,
    benefit_id: grant.benefitId,
    error: grant.error,
    customer: serializeCustomer(customer),
    member: null,
    benefit: serializeBenefit(benefit),
    properties: grant.properties,
    previous_properties: grant.previousProperties,
  };
}
export type GrantWire = ReturnType<typeof serializeGrant>;
