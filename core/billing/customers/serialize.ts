import { createHash } from 'node:crypto';
import type { Address } from './address.js';
import type { Customer } from './schema.js';

const serializeAddress = (address: Address) => ({
  line1: address.line1 ?? null,
  line2: address.line2 ?? null,
  postal_code: address.postal_code ?? null,
  city: address.city ?? null,
  state: address.state ?? null,
  country: address.country,
});

/** Polar's avatar for a customer: the Gravatar of the email, blank when there is none. */
const avatarUrl = (email: string) => `https://www.gravatar.com/avatar/${createHash('sha256').update(email.toLowerCase()).digest('hex')}?d=blank`;

/** The Customer of Polar's API (the one place its wire shape is written). Till's customers are all individuals. */
export function serializeCustomer(customer: Customer) {
  return {
    id: customer.id,
    created_at: customer.createdAt.toISOString(),
    modified_at: customer.modifiedAt?.toISOString() ?? null,
    metadata: customer.metadata,
    external_id: customer.externalId,
    email: customer.email,
    email_verified: customer.emailVerified,
    type: 'individual' as const,
    name: customer.name,
    billing_name: customer.billingName ?? customer.name,
    billing_address: customer.billingAddress ? serializeAddress(customer.billingAddress) : null,
    tax_id: customer.taxId,
    locale: customer.locale,
    organization_id: customer.organizationId,
    default_payment_method_id: null,
    deleted_at: customer.deletedAt?.toISOString() ?? null,
    avatar_url: avatarUrl(customer.email),
    first_user_event_at: customer.firstUserEventAt?.toISOString() ?? null,
  };
}
export type CustomerWire = ReturnType<typeof serializeCustomer>;

/**
 * Polar's CustomerState: the customer with what it is entitled to now. Subscriptions, benefit grants and meters
 * arrive with commerce; until then a customer has none of them.
 */
export function serializeCustomerState(customer: Customer) {
  return { ...serializeCustomer(customer), active_subscriptions: [], granted_benefits: [], active_meters: [] };
}
