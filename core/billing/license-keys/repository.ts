import type { Knex } from 'knex';
import { fromDbInt, fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import { dialectOf } from '../../db/database.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { LicenseKey, LicenseKeyActivation, LicenseKeyStatus } from './schema.js';

type Executor = Knex | Knex.Transaction;
const TABLE = 'license_keys';
const ACTIVATIONS = 'license_key_activations';

function toLicenseKey(row: Record<string, unknown>): LicenseKey {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    customerId: String(row.customer_id),
    benefitId: String(row.benefit_id),
    key: String(row.key),
    status: row.status as LicenseKeyStatus,
    limitActivations: row.limit_activations === null ? null : fromDbInt(row.limit_activations),
    usage: fromDbInt(row.usage),
    limitUsage: row.limit_usage === null ? null : fromDbInt(row.limit_usage),
    validations: fromDbInt(row.validations),
    lastValidatedAt: fromDbTimeOrNull(row.last_validated_at),
    expiresAt: fromDbTimeOrNull(row.expires_at),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

function toActivation(row: Record<string, unknown>): LicenseKeyActivation {
  return {
    id: String(row.id),
    licenseKeyId: String(row.license_key_id),
    label: String(row.label),
    meta: fromDbJson(row.meta),
    conditions: fromDbJson(row.conditions),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

const mutableColumns = (key: LicenseKey) => ({
  status: key.status,
  limit_activations: key.limitActivations,
  usage: key.usage,
  limit_usage: key.limitUsage,
  expires_at: toDbTimeOrNull(key.expiresAt),
  modified_at: toDbTimeOrNull(key.modifiedAt),
});

export async function insertLicenseKey(trx: Executor, key: LicenseKey): Promise<void> {
  await trx(TABLE).insert({
    id: key.id,
    organization_id: key.organizationId,
    customer_id: key.customerId,
    benefit_id: key.benefitId,
    key: key.key,
    validations: key.validations,
    last_validated_at: toDbTimeOrNull(key.lastValidatedAt),
    created_at: toDbTime(key.createdAt),
    ...mutableColumns(key),
  });
}

/** Writes status, limits, usage and expiry (grants, and PATCH). */
export async function saveLicenseKey(trx: Executor, key: LicenseKey): Promise<void> {
  await trx(TABLE).where({ id: key.id }).update(mutableColumns(key));
}

/** Writes a rotated key's new value (and its modification time). */
export async function saveRotatedKey(trx: Executor, key: LicenseKey): Promise<void> {
  await trx(TABLE).where({ id: key.id }).update({ key: key.key, modified_at: toDbTimeOrNull(key.modifiedAt) });
}

const lockable = (db: Executor, query: Knex.QueryBuilder, forUpdate?: boolean) => {
  if (forUpdate && dialectOf(db as Knex) === 'postgres') query.forUpdate();
  return query;
};

export async function findLicenseKey(db: Executor, id: string, organizationIds: Iterable<string>, options: { forUpdate?: boolean } = {}): Promise<LicenseKey | undefined> {
  const row = await lockable(db, db(TABLE).where({ id }).whereIn('organization_id', [...organizationIds]), options.forUpdate).first();
  return row ? toLicenseKey(row) : undefined;
}

/** The key an application presents, within one organization (validate, activate, deactivate). */
export async function findLicenseKeyByKey(db: Executor, organizationId: string, key: string, options: { forUpdate?: boolean } = {}): Promise<LicenseKey | undefined> {
  const row = await lockable(db, db(TABLE).where({ organization_id: organizationId, key }), options.forUpdate).first();
  return row ? toLicenseKey(row) : undefined;
}

/** The key a license-keys grant issued, checked to still belong to that customer and benefit. */
export async function findGrantedLicenseKey(db: Executor, id: string, customerId: string, benefitId: string): Promise<LicenseKey | undefined> {
  const row = await lockable(db, db(TABLE).where({ id, customer_id: customerId, benefit_id: benefitId }), true).first();
  return row ? toLicenseKey(row) : undefined;
}

/**
 * Counts a validation, adding `incrementUsage` only while it fits under the usage limit: the check and the
 * increment are one guarded UPDATE, so concurrent validations can never use more than the limit. False when
 * the usage left was too small.
 */
export async function recordValidation(trx: Executor, id: string, incrementUsage: number, at: Date): Promise<boolean> {
  const query = trx(TABLE).where({ id });
  if (incrementUsage > 0) query.where((q) => q.whereNull('limit_usage').orWhereRaw('?? + ? <= ??', ['usage', incrementUsage, 'limit_usage']));
  const count = await query.update({
    usage: trx.raw('?? + ?', ['usage', incrementUsage]),
    validations: trx.raw('?? + 1', ['validations']),
    last_validated_at: toDbTime(at),
  });
  return count === 1;
}

export interface LicenseKeyFilter {
  organizationIds: readonly string[];
  benefitIds?: readonly string[];
  statuses?: readonly LicenseKeyStatus[];
  customerIds?: readonly string[];
}

export async function listLicenseKeys(db: Executor, filter: LicenseKeyFilter, page: PageQuery): Promise<Page<LicenseKey>> {
  const scoped = () => {
    const query = db(TABLE).whereIn('organization_id', filter.organizationIds);
    if (filter.benefitIds) query.whereIn('benefit_id', filter.benefitIds);
    if (filter.statuses) query.whereIn('status', filter.statuses);
    if (filter.customerIds) query.whereIn('customer_id', filter.customerIds);
    return query;
  };
  const [{ count }] = await scoped().count({ count: '*' });
  // Polar lists keys oldest first.
  const rows = await scoped().orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toLicenseKey), totalCount: Number(count) };
}

/** The key's live (not deactivated) activations, oldest first. */
export async function activationsOf(db: Executor, licenseKeyId: string): Promise<LicenseKeyActivation[]> {
  const rows = await db(ACTIVATIONS).where({ license_key_id: licenseKeyId }).whereNull('deleted_at').orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(toActivation);
}

export async function findActivation(db: Executor, licenseKeyId: string, id: string): Promise<LicenseKeyActivation | undefined> {
  const row = await db(ACTIVATIONS).where({ id, license_key_id: licenseKeyId }).whereNull('deleted_at').first();
  return row ? toActivation(row) : undefined;
}

export async function countActivations(db: Executor, licenseKeyId: string): Promise<number> {
  const [{ count }] = await db(ACTIVATIONS).where({ license_key_id: licenseKeyId }).whereNull('deleted_at').count({ count: '*' });
  return Number(count);
}

export async function insertActivation(trx: Executor, activation: LicenseKeyActivation): Promise<void> {
  await trx(ACTIVATIONS).insert({
    id: activation.id,
    license_key_id: activation.licenseKeyId,
    label: activation.label,
    meta: toDbJson(activation.meta),
    conditions: toDbJson(activation.conditions),
    created_at: toDbTime(activation.createdAt),
    modified_at: null,
    deleted_at: null,
  });
}

/** Soft-deletes a live activation; false when it was already gone (a concurrent deactivation). */
export async function deleteActivation(trx: Executor, id: string, at: Date): Promise<boolean> {
  return (await trx(ACTIVATIONS).where({ id }).whereNull('deleted_at').update({ deleted_at: toDbTime(at), modified_at: toDbTime(at) })) === 1;
}
