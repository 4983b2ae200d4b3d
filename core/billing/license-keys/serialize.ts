import type { Customer } from '../customers/schema.js';
import { serializeCustomer } from '../customers/serialize.js';
import { displayKey, type LicenseKey, type LicenseKeyActivation } from './schema.js';

/** Polar's LicenseKeyRead. */
export function serializeLicenseKey(key: LicenseKey, customer: Customer) {
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
export const serializeLicenseKeyWithActivations = (key: LicenseKey, customer: Customer, activations: LicenseKeyActivation[]) => ({
  ...serializeLicenseKey(key, customer),
  activations: activations.map(serializeActivation),
});

/** ValidatedLicenseKey (validate). */
export const serializeValidatedLicenseKey = (key: LicenseKey, customer: Customer, activation: LicenseKeyActivation | null) => ({
  ...serializeLicenseKey(key, customer),
  activation: activation ? serializeActivation(activation) : null,
});

/** LicenseKeyActivationRead (activate, get activation). */
export const serializeActivationRead = (activation: LicenseKeyActivation, key: LicenseKey, customer: Customer) => ({
  ...serializeActivation(activation),
  license_key: serializeLicenseKey(key, customer),
});
