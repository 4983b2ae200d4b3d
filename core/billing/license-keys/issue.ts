import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { newId } from '../../db/columns.js';
import type { Benefit } from '../benefits/schema.js';
import { addInterval } from '../shared/time.js';
import { findGrantedLicenseKey, insertLicenseKey, saveLicenseKey } from './repository.js';
import { displayKey, type LicenseKey } from './schema.js';

type LicenseKeysBenefit = Extract<Benefit, { type: 'license_keys' }>;

/** A new key: the benefit's prefix upper-cased before a random UUID, as Polar issues them. */
export function generateKey(prefix: string | null): string {
  const key = randomUUID().toUpperCase();
  const clean = prefix?.trim().toUpperCase();
  return clean ? `${clean}-${key}` : key;
}

/** The limits and expiry a benefit gives a key issued (or re-issued) at `now` on the organization's clock. */
function termsOf(benefit: LicenseKeysBenefit, now: Date) {
  const { expires, activations, limit_usage } = benefit.properties;
  return {
    limitActivations: activations?.limit ?? null,
    limitUsage: limit_usage ?? null,
    expiresAt: expires ? addInterval(now, expires.timeframe, expires.ttl) : null,
  };
}

/**
 * Issues the key of a license-keys grant, or — when the grant already holds one (a re-grant) — gives that key
 * back its status, limits and a fresh expiry from the benefit. `now` is the organization's clock.
 */
export async function grantLicenseKey(
  trx: Knex.Transaction,
  now: Date,
  benefit: LicenseKeysBenefit,
  customerId: string,
  existingId: string | null,
): Promise<LicenseKey> {
  const terms = termsOf(benefit, now);
  const existing = existingId ? await findGrantedLicenseKey(trx, existingId, customerId, benefit.id) : undefined;
  if (existing) {
    const updated: LicenseKey = { ...existing, status: 'granted', ...terms, modifiedAt: now };
    await saveLicenseKey(trx, updated);
    return updated;
  }
  const key: LicenseKey = {
    id: newId(),
    organizationId: benefit.organizationId,
    customerId,
    benefitId: benefit.id,
    key: generateKey(benefit.properties.prefix),
    status: 'granted',
    ...terms,
    usage: 0,
    validations: 0,
    lastValidatedAt: null,
    createdAt: now,
    modifiedAt: null,
  };
  await insertLicenseKey(trx, key);
  return key;
}

/** Revokes the key of a grant (validation then answers 404, activation 403). */
export async function revokeLicenseKey(trx: Knex.Transaction, now: Date, id: string, customerId: string, benefitId: string): Promise<LicenseKey | undefined> {
  const existing = await findGrantedLicenseKey(trx, id, customerId, benefitId);
  if (!existing) return undefined;
  const revoked: LicenseKey = { ...existing, status: 'revoked', modifiedAt: now };
  await saveLicenseKey(trx, revoked);
  return revoked;
}

/** The grant properties Polar shows for a license key. */
export const licenseKeyGrantProperties = (key: LicenseKey) => ({ license_key_id: key.id, display_key: displayKey(key.key) });
