import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database, Executor } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { findCustomers } from '../customers/repository.js';
import type { Customer } from '../customers/schema.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import { findBenefit } from '../benefits/repository.js';
import { grantsOfCustomerBenefit, saveGrantProperties } from '../benefit-grants/repository.js';
import { generateKey, licenseKeyGrantProperties } from './issue.js';
import {
  activationsOf,
  countActivations,
  deleteActivation,
  findActivation,
  findLicenseKey,
  findLicenseKeyByKey,
  insertActivation,
  listLicenseKeys as listRows,
  recordValidation,
  saveLicenseKey,
  saveRotatedKey,
  type LicenseKeyFilter,
} from './repository.js';
import type { LicenseKey, LicenseKeyActivate, LicenseKeyActivation, LicenseKeyDeactivate, LicenseKeyUpdate, LicenseKeyValidate } from './schema.js';

/** A key with the customer its wire shape embeds. */
export interface LicenseKeyView {
  key: LicenseKey;
  customer: Customer;
}

const notFound = (message = 'License key not found') => new CoreError('not_found', 'LICENSE_KEY_NOT_FOUND', message);
const notPermitted = (code: string, message: string) => new CoreError('forbidden', code, message);

/** Polar answers a usage request above what is left with a 400 BadRequest, not a validation error. */
const usageExceeded = (message: string) => new CoreError('bad_request', 'LICENSE_KEY_USAGE_EXCEEDED', message);

async function view(db: Executor, key: LicenseKey): Promise<LicenseKeyView> {
  const customer = (await findCustomers(db, { id: key.customerId }, [key.organizationId], { includeDeleted: true }))[0];
  if (!customer) throw notFound();
  return { key, customer };
}

export async function listLicenseKeys(db: Database, filter: LicenseKeyFilter, page: PageQuery): Promise<Page<LicenseKeyView>> {
  const rows = await listRows(db, filter, page);
  return { items: await Promise.all(rows.items.map((key) => view(db, key))), totalCount: rows.totalCount };
}

export async function getLicenseKey(db: Database, readable: ReadonlySet<string>, id: string): Promise<LicenseKeyView & { activations: LicenseKeyActivation[] }> {
  const key = await findLicenseKey(db, id, readable);
  if (!key) throw notFound();
  return { ...(await view(db, key)), activations: await activationsOf(db, key.id) };
}

export async function getActivation(db: Database, readable: ReadonlySet<string>, id: string, activationId: string): Promise<LicenseKeyView & { activation: LicenseKeyActivation }> {
  const key = await findLicenseKey(db, id, readable);
  const activation = key && (await findActivation(db, key.id, activationId));
  if (!key || !activation) throw new CoreError('not_found', 'ACTIVATION_NOT_FOUND', 'License key activation not found');
  return { ...(await view(db, key)), activation };
}

/** PATCH: only given fields change; a usage above the limit is refused. */
export async function updateLicenseKey(db: Database, clock: Clock, writable: ReadonlySet<string>, id: string, update: LicenseKeyUpdate): Promise<LicenseKeyView> {
  return db.transaction(async (trx) => {
    const key = await findLicenseKey(trx, id, writable, { forUpdate: true });
    if (!key) throw notFound();
    const now = (await organizationClock(trx, clock, key.organizationId)).now();
    const next: LicenseKey = {
      ...key,
      status: update.status ?? key.status,
      usage: update.usage ?? key.usage,
      limitActivations: update.limit_activations === undefined ? key.limitActivations : update.limit_activations,
      limitUsage: update.limit_usage === undefined ? key.limitUsage : update.limit_usage,
      expiresAt: update.expires_at === undefined ? key.expiresAt : update.expires_at,
      modifiedAt: now,
    };
    if (next.limitUsage !== null && next.usage > next.limitUsage) {
      throw new CoreError('invalid', 'USAGE_ABOVE_LIMIT', 'usage is above limit_usage', [{ loc: ['body', 'usage'], msg: `Usage cannot exceed the usage limit (${next.limitUsage}).`, type: 'value_error' }]);
    }
    await saveLicenseKey(trx, next);
    return view(trx, next);
  });
}

/** Whether a key may be used now: granted and not expired (on the organization's clock). */
async function usableKey(trx: Executor, clock: Clock, organizationId: string, keyText: string, refuse: (message: string) => Error) {
  const key = await findLicenseKeyByKey(trx, organizationId, keyText, { forUpdate: true });
  if (!key) throw notFound();
  const now = (await organizationClock(trx, clock, organizationId)).now();
  if (key.status !== 'granted') throw refuse('License key is no longer active.');
  if (key.expiresAt && now.getTime() >= key.expiresAt.getTime()) throw refuse('License key has expired.');
  return { key, now };
}

/**
 * Validates a key as Polar does: 404 when it is unknown, not granted, expired, or does not match the given
 * activation (and its conditions), benefit or customer; 400 when `increment_usage` exceeds the usage left. A
 * valid key counts the validation (and the usage) in one guarded update.
 */
export async function validateLicenseKey(db: Database, clock: Clock, input: LicenseKeyValidate): Promise<LicenseKeyView & { activation: LicenseKeyActivation | null }> {
  return db.transaction(async (trx) => {
    const { key, now } = await usableKey(trx, clock, input.organization_id, input.key, (message) => notFound(message));
    let activation: LicenseKeyActivation | null = null;
    if (input.activation_id) {
      activation = (await findActivation(trx, key.id, input.activation_id)) ?? null;
      if (!activation) throw new CoreError('not_found', 'ACTIVATION_NOT_FOUND', 'License key activation not found');
      if (Object.keys(activation.conditions).length > 0 && !sameRecord(activation.conditions, input.conditions)) {
        throw notFound('License key does not match required conditions');
      }
    }
    if (input.benefit_id && input.benefit_id !== key.benefitId) throw notFound('License key does not match given benefit.');
    if (input.customer_id && input.customer_id !== key.customerId) throw notFound('License key does not match given user.');
    const increment = input.increment_usage ?? 0;
    if (!(await recordValidation(trx, key.id, increment, now))) {
      throw usageExceeded(`License key only has ${Math.max(0, (key.limitUsage ?? 0) - key.usage)} more usages.`);
    }
    const validated: LicenseKey = { ...key, usage: key.usage + increment, validations: key.validations + 1, lastValidatedAt: now };
    return { ...(await view(trx, validated)), activation };
  });
}

const sameRecord = (a: Record<string, unknown>, b: Record<string, unknown>) => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
};

/**
 * Activates a key on one more instance: 403 when it is not granted, expired, has no activation limit, or the
 * limit is reached. The key's row is locked while counting, so concurrent activations cannot pass the limit.
 */
export async function activateLicenseKey(db: Database, clock: Clock, input: LicenseKeyActivate): Promise<LicenseKeyView & { activation: LicenseKeyActivation }> {
  return db.transaction(async (trx) => {
    const { key, now } = await usableKey(trx, clock, input.organization_id, input.key, (message) =>
      notPermitted('LICENSE_KEY_INACTIVE', message.startsWith('License key is no longer') ? 'License key is no longer active. This license key can not be activated.' : message),
    );
    if (!key.limitActivations) {
      throw notPermitted('ACTIVATIONS_NOT_SUPPORTED', 'This license key does not support activations. Use the /validate endpoint instead to check license validity.');
    }
    if ((await countActivations(trx, key.id)) >= key.limitActivations) throw notPermitted('ACTIVATION_LIMIT_REACHED', 'License key activation limit already reached');
    const activation: LicenseKeyActivation = { id: newId(), licenseKeyId: key.id, label: input.label, meta: input.meta, conditions: input.conditions, createdAt: now, modifiedAt: null };
    await insertActivation(trx, activation);
    return { ...(await view(trx, key)), activation };
  });
}

/** Deactivates one activation (soft delete); 404 when the key or a live activation of it is not found. */
export async function deactivateLicenseKey(db: Database, clock: Clock, input: LicenseKeyDeactivate): Promise<void> {
  await db.transaction(async (trx) => {
    const key = await findLicenseKeyByKey(trx, input.organization_id, input.key, { forUpdate: true });
    if (!key) throw notFound();
    const activation = await findActivation(trx, key.id, input.activation_id);
    const now = (await organizationClock(trx, clock, key.organizationId)).now();
    if (!activation || !(await deleteActivation(trx, activation.id, now))) throw new CoreError('not_found', 'ACTIVATION_NOT_FOUND', 'License key activation not found');
  });
}

/** Polar rotates a key that is granted or disabled; a revoked one stays as it was. */
const ROTATABLE = new Set<LicenseKey['status']>(['granted', 'disabled']);

/**
 * Rotates a key (Polar's `license_keys.rotate`): a new key from the benefit's prefix replaces the old one, which no
 * longer validates; status, limits, usage, validations and activations stay. The grant shows the new display key.
 * `customerId` limits it to one customer's keys (the customer portal). A revoked key is 400 RotateNotPermitted.
 */
export async function rotateLicenseKey(db: Database, clock: Clock, writable: ReadonlySet<string>, id: string, options: { customerId?: string } = {}): Promise<LicenseKeyView> {
  return db.transaction(async (trx) => {
    const key = await findLicenseKey(trx, id, writable, { forUpdate: true });
    if (!key || (options.customerId !== undefined && key.customerId !== options.customerId)) throw notFound();
    if (!ROTATABLE.has(key.status)) {
      throw new CoreError('bad_request', 'ROTATE_NOT_PERMITTED', `License key cannot be rotated in its current status. Current status: ${key.status}. Allowed statuses: disabled, granted.`);
    }
    const benefit = await findBenefit(trx, key.benefitId, [key.organizationId]);
    const prefix = benefit?.type === 'license_keys' ? benefit.properties.prefix : null;
    const now = (await organizationClock(trx, clock, key.organizationId)).now();
    const rotated: LicenseKey = { ...key, key: generateKey(prefix ?? null), modifiedAt: now };
    await saveRotatedKey(trx, rotated);
    for (const grant of await grantsOfCustomerBenefit(trx, key.customerId, key.benefitId)) {
      if (grant.properties.license_key_id === key.id) await saveGrantProperties(trx, grant.id, { ...grant.properties, ...licenseKeyGrantProperties(rotated) }, now);
    }
    return view(trx, rotated);
  });
}
