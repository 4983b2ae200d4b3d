import type { Database } from '../../db/database.js';
import type { Clock } from '../../clock.js';
import { CoreError } from '../../errors.js';
import { recordEvent } from '../../webhooks/outbox.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { newId } from '../../db/columns.js';
import { findOrganization, insertOrganization, isSlugTaken, listOrganizations as listRows, membershipsOf, saveOrganization } from './repository.js';
import { OrganizationSettings, type Organization, type OrganizationCreate, type OrganizationUpdate } from './schema.js';
import { slugFromName, slugProblem } from './slug.js';
import { serializeOrganization } from './serialize.js';

const notFound = () => new CoreError('not_found', 'ORGANIZATION_NOT_FOUND', 'Organization not found');
const slugTaken = () =>
  new CoreError('invalid', 'SLUG_TAKEN', 'This slug is taken', [{ loc: ['body', 'slug'], msg: 'An organization with this slug already exists', type: 'value_error' }]);

/** The organizations a user belongs to, with their role in each (what /v1 grants them). */
export function membershipsOfUser(db: Database, userId: string): Promise<{ organizationId: string; role: string }[]> {
  return membershipsOf(db, userId);
}

/** An organization the caller reaches; any other id is "not found", never "forbidden" (tenancy). */
export async function getOrganization(db: Database, reachable: ReadonlySet<string>, id: string): Promise<Organization> {
  const organization = reachable.has(id) ? await findOrganization(db, id) : undefined;
  if (!organization) throw notFound();
  return organization;
}

export function listOrganizations(
  db: Database,
  reachable: ReadonlySet<string>,
  filter: { slug?: string },
  sorting: readonly SortCriterion[],
  page: PageQuery,
): Promise<Page<Organization>> {
  return listRows(db, { ids: [...reachable], slug: filter.slug }, sorting, page);
}

/** Applies an update and announces it (organization.updated) in the same transaction. */
export async function updateOrganization(
  db: Database,
  clock: Clock,
  reachable: ReadonlySet<string>,
  id: string,
  input: OrganizationUpdate,
): Promise<Organization> {
  return db.transaction(async (trx) => {
    if (!reachable.has(id)) throw notFound();
    const current = await findOrganization(trx, id, { forUpdate: true });
    if (!current) throw notFound();
    if (input.slug && input.slug !== current.slug && (await isSlugTaken(trx, input.slug, id))) throw slugTaken();
    const now = clock.now();
    const next: Organization = {
      ...current,
      name: input.name ?? current.name,
      slug: input.slug ?? current.slug,
      avatarUrl: input.avatar_url === undefined ? current.avatarUrl : input.avatar_url,
      modifiedAt: now,
      settings: withSettings(current.settings, input, now),
    };
    // The check above answers the common case; the unique index settles a race with another update.
    if (!(await saveOrganization(trx, next, now))) throw slugTaken();
    await recordEvent(trx, clock, { organizationId: id, type: 'organization.updated', data: serializeOrganization(next) });
    return next;
  });
}

/** The settings `input` asks for, over `s`: what the input leaves out stays as it is. */
function withSettings(s: OrganizationSettings, input: Omit<OrganizationUpdate, 'name' | 'slug' | 'sso_enforced'>, now: Date): OrganizationSettings {
  return OrganizationSettings.parse({
    ...s,
    email: input.email === undefined ? s.email : input.email,
    website: input.website === undefined ? s.website : input.website,
    socials: input.socials ?? s.socials,
    country: input.country === undefined ? s.country : input.country,
    // Submitting details is what Polar's onboarding records; Till keeps only when.
    details_submitted_at: input.details ? (s.details_submitted_at ?? now) : s.details_submitted_at,
    feature_settings: input.feature_settings ? { ...s.feature_settings, ...input.feature_settings } : s.feature_settings,
    subscription_settings: input.subscription_settings ? { ...s.subscription_settings, ...input.subscription_settings } : s.subscription_settings,
    notification_settings: input.notification_settings ? { ...s.notification_settings, ...input.notification_settings } : s.notification_settings,
    customer_email_settings: input.customer_email_settings ? { ...s.customer_email_settings, ...input.customer_email_settings } : s.customer_email_settings,
    customer_portal_settings: input.customer_portal_settings ? { ...s.customer_portal_settings, ...input.customer_portal_settings } : s.customer_portal_settings,
    default_presentment_currency: input.default_presentment_currency ?? s.default_presentment_currency,
    default_tax_behavior: input.default_tax_behavior ?? s.default_tax_behavior,
  });
}

/**
 * Creates an organization with `creatorUserId` as its owner: the one way Till makes one (POST /v1/organizations,
 * the /account form, `till orgs create`). The slug is derived from the name when none is given.
 */
export async function createOrganization(db: Database, clock: Clock, creatorUserId: string, input: OrganizationCreate): Promise<Organization> {
  const slug = input.slug ?? slugFromName(input.name);
  if (slugProblem(slug)) {
    throw new CoreError('invalid', 'VALIDATION_ERROR', 'Invalid slug', [
      { loc: ['body', 'slug'], msg: 'Choose a slug: the name has too few letters or digits to derive one from', type: 'value_error' },
    ]);
  }
  return db.transaction(async (trx) => {
    if (await isSlugTaken(trx, slug, '')) throw slugTaken();
    const now = clock.now();
    const organization: Organization = {
      id: newId(),
      name: input.name,
      slug,
      avatarUrl: input.avatar_url ?? null,
      createdAt: now,
      modifiedAt: null,
      settings: withSettings(OrganizationSettings.parse({}), input, now),
    };
    // The check above answers the common case; the unique index settles a race with another create.
    if (!(await insertOrganization(trx, organization, creatorUserId))) throw slugTaken();
    return organization;
  });
}
