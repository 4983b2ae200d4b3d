import { z } from 'zod';
import { Metadata } from '../shared/metadata.js';
import { AddressInput, Text, type Address } from './address.js';
import type { TaxId } from './tax-id.js';

const Email = Text.trim().pipe(z.email({ error: 'Not a valid email address' }).max(320));
// An external id is the caller's key for the customer: kept exactly as sent, never trimmed.
export const ExternalId = Text.min(1).max(512);
const Name = Text.trim().max(256);
// The value only; its format is found from the billing address's country (tax-id.ts).
const TaxIdInput = Text.trim().min(1).max(64);
const Locale = Text.trim().max(35);
// jsonb refuses \u0000, so a NUL anywhere in metadata would be a 500 on PostgreSQL.
const CustomerMetadata = Metadata.refine((metadata) => !JSON.stringify(metadata).includes('\\u0000'), 'Metadata must not contain NUL characters');
const Individual = z.literal('individual', { error: 'Only individual customers are supported' });

/** POST /v1/customers/ (Polar's CustomerIndividualCreate; team customers are not supported). */
export const CustomerCreate = z.object({
  type: Individual.default('individual'),
  email: Email,
  external_id: ExternalId.nullish(),
  name: Name.nullish(),
  billing_address: AddressInput.nullish(),
  tax_id: TaxIdInput.nullish(),
  locale: Locale.nullish(),
  organization_id: z.string().min(1).nullish(),
  // Polar's member model (an owner member created with the customer) is not in Till yet: accepted and ignored.
  owner: z.object({ email: Email, name: Name.nullish(), external_id: ExternalId.nullish() }).nullish(),
  metadata: CustomerMetadata.default({}),
});
export type CustomerCreate = z.infer<typeof CustomerCreate>;

/** PATCH /v1/customers/external/{external_id}: every field optional; the external id itself cannot change here. */
export const CustomerUpdateExternal = z.object({
  metadata: CustomerMetadata.nullish(),
  email: Email.nullish(),
  name: Name.nullish(),
  billing_address: AddressInput.nullish(),
  tax_id: TaxIdInput.nullish(),
  locale: Locale.nullish(),
});

/** PATCH /v1/customers/{id}: also sets the external id, once. */
export const CustomerUpdate = CustomerUpdateExternal.extend({
  external_id: ExternalId.nullish(),
  type: Individual.nullish(),
});
export type CustomerUpdate = z.infer<typeof CustomerUpdate>;

/**
 * PATCH /v1/customer-portal/customers/me (Polar's CustomerPortalCustomerUpdate): what a customer may change of
 * themselves. `default_payment_method_id` is not taken yet (the portal has no payment methods): it is a 422.
 */
export const CustomerPortalUpdate = z.strictObject({
  billing_name: Name.nullish(),
  billing_address: AddressInput.nullish(),
  tax_id: TaxIdInput.nullish(),
});
export type CustomerPortalUpdate = z.infer<typeof CustomerPortalUpdate>;

/** A customer as core knows it. */
export interface Customer {
  id: string;
  organizationId: string;
  externalId: string | null;
  email: string;
  emailVerified: boolean;
  name: string | null;
  /** The name on invoices, when it differs from `name` (set by checkouts later). */
  billingName: string | null;
  billingAddress: Address | null;
  taxId: TaxId | null;
  locale: string | null;
  metadata: Metadata;
  createdAt: Date;
  modifiedAt: Date | null;
  deletedAt: Date | null;
  /** When the first event was ingested for it (set by ingestion; absent on a customer not read from the database). */
  firstUserEventAt?: Date | null;
}

/** What a list narrows to: the organizations (already limited to those the caller reaches) and Polar's filters. */
export interface CustomerFilter {
  organizationIds: readonly string[];
  /** Exact, case-insensitive. */
  email?: string;
  /** A substring of name, billing name or email, or a prefix of the external id; case-insensitive. */
  query?: string;
  /** true: holding a trialing, active or past_due subscription; false: holding none. */
  active?: boolean;
  metadata: Record<string, string[]>;
}

/** How a route names one customer: by id, or by the external id (optionally within one organization). */
export type CustomerKey = { id: string } | { externalId: string; organizationId?: string };
