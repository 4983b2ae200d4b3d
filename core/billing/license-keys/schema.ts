import { z } from 'zod';
import { Timestamp } from '../shared/time.js';

export const LICENSE_KEY_STATUSES = ['granted', 'revoked', 'disabled'] as const;
export type LicenseKeyStatus = (typeof LICENSE_KEY_STATUSES)[number];

/** A value of an activation's `conditions` or `meta`: Polar takes strings (≤ 500), numbers and booleans. */
const Scalar = z.union([z.string().max(500), z.number(), z.boolean()]);
const ScalarRecord = z.record(z.string().min(1).max(40), Scalar).refine((value) => Object.keys(value).length <= 50, { message: 'At most 50 keys' });

export interface LicenseKey {
  id: string;
  organizationId: string;
  customerId: string;
  benefitId: string;
  key: string;
  status: LicenseKeyStatus;
  limitActivations: number | null;
  usage: number;
  limitUsage: number | null;
  validations: number;
  lastValidatedAt: Date | null;
  expiresAt: Date | null;
  createdAt: Date;
  modifiedAt: Date | null;
}

export interface LicenseKeyActivation {
  id: string;
  licenseKeyId: string;
  label: string;
  meta: Record<string, string | number | boolean>;
  conditions: Record<string, string | number | boolean>;
  createdAt: Date;
  modifiedAt: Date | null;
}

const Key = z.string().min(1).max(512);
const OrganizationId = z.string().min(1).max(128);

/** POST …/license-keys/validate */
export const LicenseKeyValidate = z.object({
  key: Key,
  organization_id: OrganizationId,
  activation_id: z.string().min(1).nullish(),
  benefit_id: z.string().min(1).nullish(),
  customer_id: z.string().min(1).nullish(),
  increment_usage: z.number().int().min(0).max(2_147_483_647).nullish(),
  conditions: ScalarRecord.default({}),
});
export type LicenseKeyValidate = z.infer<typeof LicenseKeyValidate>;

/** POST …/license-keys/activate */
export const LicenseKeyActivate = z.object({
  key: Key,
  organization_id: OrganizationId,
  label: z.string().min(1).max(255),
  conditions: ScalarRecord.default({}),
  meta: ScalarRecord.default({}),
});
export type LicenseKeyActivate = z.infer<typeof LicenseKeyActivate>;

/** POST …/license-keys/deactivate */
export const LicenseKeyDeactivate = z.object({ key: Key, organization_id: OrganizationId, activation_id: z.string().min(1) });
export type LicenseKeyDeactivate = z.infer<typeof LicenseKeyDeactivate>;

const Int32 = z.number().int().min(0).max(2_147_483_647);

/** PATCH /v1/license-keys/{id}: only the fields given change; `null` clears a limit or the expiry. */
export const LicenseKeyUpdate = z.object({
  status: z.enum(LICENSE_KEY_STATUSES).nullish(),
  usage: Int32.optional(),
  limit_activations: z.number().int().min(1).max(50).nullish(),
  limit_usage: z.number().int().min(1).max(2_147_483_647).nullish(),
  expires_at: Timestamp.nullish(),
});
export type LicenseKeyUpdate = z.infer<typeof LicenseKeyUpdate>;

/** Polar's key: the benefit's prefix (upper-cased) and a random UUID, `PREFIX-XXXXXXXX-…`. */
export function displayKey(key: string): string {
  return `****-${key.slice(-6)}`;
}
