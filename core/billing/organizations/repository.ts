import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { isUniqueViolation } from '../../db/sql.js';
import { dialectOf } from '../../db/database.js';
import { fromDbJson, fromDbTime, fromDbTimeOrNull, newId, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import { offsetOf } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { OrganizationSettings, type Organization } from './schema.js';

type Executor = Knex | Knex.Transaction;

/** The organizations a user belongs to, with their role (Better Auth's `member` table). */
export async function membershipsOf(db: Executor, userId: string): Promise<{ organizationId: string; role: string }[]> {
  return db('member').where({ userId }).select({ organizationId: 'organizationId', role: 'role' });
}

const columns = {
  id: 'organization.id',
  name: 'organization.name',
  slug: 'organization.slug',
  logo: 'organization.logo',
  createdAt: 'organization.createdAt',
  settings_email: 'organization_settings.email',
  settings_website: 'organization_settings.website',
  socials: 'organization_settings.socials',
  details_submitted_at: 'organization_settings.details_submitted_at',
  feature_settings: 'organization_settings.feature_settings',
  subscription_settings: 'organization_settings.subscription_settings',
  notification_settings: 'organization_settings.notification_settings',
  customer_email_settings: 'organization_settings.customer_email_settings',
  customer_portal_settings: 'organization_settings.customer_portal_settings',
  default_presentment_currency: 'organization_settings.default_presentment_currency',
  default_tax_behavior: 'organization_settings.default_tax_behavior',
  country: 'organization_settings.country',
  modified_at: 'organization_settings.modified_at',
};

const base = (db: Executor) =>
  db('organization').leftJoin('organization_settings', 'organization_settings.organization_id', 'organization.id').select(columns);

type Row = Record<keyof typeof columns, unknown>;

function toOrganization(row: Row): Organization {
  // An organization whose settings were never written reads with the defaults.
  const settings = OrganizationSettings.parse(
    row.feature_settings === null || row.feature_settings === undefined
      ? {}
      : {
          email: row.settings_email,
          website: row.settings_website,
          socials: fromDbJson(row.socials),
          details_submitted_at: fromDbTimeOrNull(row.details_submitted_at),
          feature_settings: fromDbJson(row.feature_settings),
          subscription_settings: fromDbJson(row.subscription_settings),
          notification_settings: fromDbJson(row.notification_settings),
          customer_email_settings: fromDbJson(row.customer_email_settings),
          customer_portal_settings: fromDbJson(row.customer_portal_settings),
          default_presentment_currency: row.default_presentment_currency,
          default_tax_behavior: row.default_tax_behavior,
          country: row.country,
        },
  );
  return {
    id: String(row.id),
    name: String(row.name),
    slug: String(row.slug),
    avatarUrl: (row.logo as string | null) ?? null,
    createdAt: fromDbTime(row.createdAt),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
    settings,
  };
}

/** An organization; `forUpdate` locks its row on PostgreSQL so concurrent updates apply one after the other. */
export async function findOrganization(db: Executor, id: string, options: { forUpdate?: boolean } = {}): Promise<Organization | undefined> {
  const query = base(db).where('organization.id', id);
  if (options.forUpdate && dialectOf(db as Knex) === 'postgres') query.forUpdate('organization');
  const row = await query.first();
  return row ? toOrganization(row) : undefined;
}

/** The organization at this slug (the customer portal's address names it). */
export async function findOrganizationBySlug(db: Executor, slug: string): Promise<Organization | undefined> {
  const row = await base(db).where('organization.slug', slug).first();
  return row ? toOrganization(row) : undefined;
}

const SORT_COLUMNS: Record<string, string> = { created_at: 'organization.createdAt', name: 'organization.name', slug: 'organization.slug' };

export async function listOrganizations(
  db: Executor,
  filter: { ids: readonly string[]; slug?: string },
  sorting: readonly SortCriterion[],
  page: PageQuery,
): Promise<Page<Organization>> {
  const scoped = () => {
    const query = db('organization').whereIn('organization.id', filter.ids);
    if (filter.slug) query.andWhere('organization.slug', filter.slug);
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = base(db).whereIn('organization.id', filter.ids);
  if (filter.slug) query.andWhere('organization.slug', filter.slug);
  for (const { column, order } of sorting) if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
  query.orderBy('organization.id', 'asc');
  const rows = await query.limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toOrganization), totalCount: Number(count) };
}

export async function isSlugTaken(db: Executor, slug: string, exceptId: string): Promise<boolean> {
  return Boolean(await db('organization').where({ slug }).whereNot({ id: exceptId }).first('id'));
}

/**
 * Writes name, slug and logo on Better Auth's row and the billing settings beside it. False when the
 * slug's unique index refused the write (another organization took it meanwhile).
 */
export async function saveOrganization(trx: Knex.Transaction, organization: Organization, modifiedAt: Date): Promise<boolean> {
  try {
    await trx('organization').where({ id: organization.id }).update({ name: organization.name, slug: organization.slug, logo: organization.avatarUrl });
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
  await trx('organization_settings').insert(settingsRow(organization, modifiedAt)).onConflict('organization_id').merge();
  return true;
}

function settingsRow(organization: Organization, modifiedAt: Date | null) {
  const s = organization.settings;
  return {
    organization_id: organization.id,
    email: s.email,
    website: s.website,
    socials: toDbJson(s.socials),
    details_submitted_at: toDbTimeOrNull(s.details_submitted_at),
    feature_settings: toDbJson(s.feature_settings),
    subscription_settings: toDbJson(s.subscription_settings),
    notification_settings: toDbJson(s.notification_settings),
    customer_email_settings: toDbJson(s.customer_email_settings),
    customer_portal_settings: toDbJson(s.customer_portal_settings),
    default_presentment_currency: s.default_presentment_currency,
    default_tax_behavior: s.default_tax_behavior,
    country: s.country,
    modified_at: toDbTimeOrNull(modifiedAt),
  };
}

/**
 * Writes a new organization as Better Auth's /organization/create does (its row, the creator as `owner`
 * member, and, teams being on, a default team of the same name holding the creator) plus the billing
 * settings. False when the slug's unique index refused it (another organization took the slug meanwhile).
 */
export async function insertOrganization(trx: Knex.Transaction, organization: Organization, ownerUserId: string): Promise<boolean> {
  const createdAt = toDbTime(organization.createdAt);
  try {
    await trx('organization').insert({ id: organization.id, name: organization.name, slug: organization.slug, logo: organization.avatarUrl, createdAt, metadata: null });
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
  await trx('member').insert({ id: newId(), organizationId: organization.id, userId: ownerUserId, role: 'owner', createdAt });
  const teamId = newId();
  await trx('team').insert({ id: teamId, name: organization.name, memberCount: 1, organizationId: organization.id, createdAt, updatedAt: null });
  await trx('teamMember').insert({ id: newId(), teamId, userId: ownerUserId, membershipKey: teamMembershipKey(teamId, ownerUserId), createdAt });
  await trx('organization_settings').insert(settingsRow(organization, organization.modifiedAt));
  return true;
}

/** Better Auth's unique key of a team membership (SHA-256 of [teamId, userId], base64url), so its team routes see no duplicate. */
function teamMembershipKey(teamId: string, userId: string): string {
  return createHash('sha256').update(JSON.stringify([teamId, userId])).digest('base64url');
}
