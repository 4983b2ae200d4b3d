import { versionAtLeast, type ApiVersion } from '../shared/api-version.js';
import type { Customer } from '../customers/schema.js';
import { serializeCustomer } from '../customers/serialize.js';
import { displayKey, type LicenseKey, type LicenseKeyActivation } from './schema.js';

/**
 * Polar's LicenseKeyRead. From 2026-10 it names the seat member holding the key; Till sells no seats, so a key is
 * always the customer's own and both are null, as Polar answers for a key granted to the customer directly.
 */
export function serializeLicenseKey(key: LicenseKey, customer: Customer, version: ApiVersion) {
  return {
    id: key.id,
    created_at: key.createdAt.toISOString(),
    modified_at: key.modifiedAt?.toISOString() ?? null,
    organization_id: key.organizationId,
    customer_id: key.customerId,
    customer: serializeCustomer(customer),
    benefit_id: key.benefitId,
    key: key.key,
    display_key: displayKey(key.key),
    status: key.status,
    limit_activations: key.limitActivations,
    usage: key.usage,
    limit_usage: key.limitUsage,
    validations: key.validations,
    last_validated_at: key.lastValidatedAt?.toISOString() ?? null,
    expires_at: key.expiresAt?.toISOString() ?? null,
    ...(versionAtLeast(version, '2026-10') ? { member_id: null, member: null } : {}),
  };
}

/** Polar's LicenseKeyActivationBase. */
export function serializeActivation(activation: LicenseKeyActivation) {
  return {
    id: activation.id,
    license_key_id: activation.licenseKeyId,
    label: activation.label,
    meta: activation.meta,
    created_at: activation.createdAt.toISOString(),
    modified_at: activation.modifiedAt?.toISOString() ?? null,
  };
}

/** LicenseKeyWithActivations (GET /v1/license-keys/{id}). */
export const serializeLicenseKeyWithActivations = (key: LicenseKey, customer: Customer, activations: LicenseKeyActivation[], version: ApiVersion) => ({
  ...serializeLicenseKey(key, customer, version),
  activations: activations.map(serializeActivation),
});

/** ValidatedLicenseKey (validate). */
export const serializeValidatedLicenseKey = (key: LicenseKey, customer: Customer, activation: LicenseKeyActivation | null, version: ApiVersion) => ({
  ...serializeLicenseKey(key, customer, version),
  activation: activation ? serializeActivation(activation) : null,
});

/** LicenseKeyActivationRead (activate, get activation). */
export const serializeActivationRead = (activation: LicenseKeyActivation, key: LicenseKey, customer: Customer, version: ApiVersion) => ({
  ...serializeActivation(activation),
  license_key: serializeLicenseKey(key, customer, version),
});
