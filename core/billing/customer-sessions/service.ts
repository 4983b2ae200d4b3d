import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { fromDbTime, fromDbTimeOrNull, newId, toDbTime } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { getCustomer } from '../customers/service.js';
import type { Customer, CustomerKey } from '../customers/schema.js';
import { customersByIds } from '../customers/repository.js';
import { findOrganization } from '../organizations/repository.js';
import type { Organization } from '../organizations/schema.js';

/** Every customer session token starts with this, so it is told from a seller's token at a glance (Polar: `polar_cst_`). */
export const CUSTOMER_SESSION_PREFIX = 'till_cst_';

/** How long a customer session lives: Polar's hour. */
export const CUSTOMER_SESSION_TTL_SECONDS = 60 * 60;

const TABLE = 'customer_sessions';
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface CustomerSession {
  id: string;
  organizationId: string;
  customerId: string;
  returnUrl: string | null;
  expiresAt: Date;
  createdAt: Date;
  modifiedAt: Date | null;
}

/** Who a portal request speaks for: exactly one live customer of one organization. */
export interface CustomerPrincipal {
  sessionId: string;
  organizationId: string;
  customerId: string;
  expiresAt: Date;
  returnUrl: string | null;
}

const toSession = (row: Record<string, unknown>): CustomerSession => ({
  id: String(row.id),
  organizationId: String(row.organization_id),
  customerId: String(row.customer_id),
  returnUrl: row.return_url === null || row.return_url === undefined ? null : String(row.return_url),
  expiresAt: fromDbTime(row.expires_at),
  createdAt: fromDbTime(row.created_at),
  modifiedAt: fromDbTimeOrNull(row.modified_at),
});

/**
 * Opens a customer session for a customer the caller may write customers of (found among `organizations`, 404
 * otherwise). The token is in the answer only; the table keeps its hash.
 */
export async function createCustomerSession(
  db: Database,
  clock: Clock,
  organizations: ReadonlySet<string>,
  key: CustomerKey,
  returnUrl: string | null,
): Promise<{ session: CustomerSession; token: string; customer: Customer; organization: Organization }> {
  const customer = await getCustomer(db, organizations, key);
  const organization = await findOrganization(db, customer.organizationId);
  if (!organization) throw new CoreError('not_found', 'CUSTOMER_NOT_FOUND', 'Customer not found');
  const now = clock.now();
  const token = `${CUSTOMER_SESSION_PREFIX}${randomBytes(32).toString('base64url')}`;
  const session: CustomerSession = {
    id: newId(),
    organizationId: customer.organizationId,
    customerId: customer.id,
    returnUrl,
    expiresAt: new Date(now.getTime() + CUSTOMER_SESSION_TTL_SECONDS * 1000),
    createdAt: now,
    modifiedAt: null,
  };
  // A customer's expired sessions open nothing: they are dropped when the customer gets a new one.
  await db(TABLE).where({ customer_id: customer.id }).where('expires_at', '<=', toDbTime(now)).del();
  await db(TABLE).insert({
    id: session.id,
    organization_id: session.organizationId,
    customer_id: session.customerId,
    token_hash: hashToken(token),
    return_url: session.returnUrl,
    expires_at: toDbTime(session.expiresAt),
    created_at: toDbTime(session.createdAt),
    modified_at: null,
  });
  return { session, token, customer, organization };
}

/**
 * The customer a Bearer customer session token speaks for, if the session is live and its customer is not deleted.
 * Expired, unknown and deleted-customer sessions all read as no session.
 */
export async function authenticateCustomerSession(db: Database, clock: Clock, token: string): Promise<CustomerPrincipal | undefined> {
  if (!token.startsWith(CUSTOMER_SESSION_PREFIX)) return undefined;
  const row = await db(TABLE).where({ token_hash: hashToken(token) }).first();
  if (!row) return undefined;
  const session = toSession(row);
  if (session.expiresAt <= clock.now()) return undefined;
  const customer = (await customersByIds(db, [session.customerId])).get(session.customerId);
  if (!customer || customer.deletedAt || customer.organizationId !== session.organizationId) return undefined;
  return { sessionId: session.id, organizationId: session.organizationId, customerId: session.customerId, expiresAt: session.expiresAt, returnUrl: session.returnUrl };
}

/** Where the customer portal of an organization lives for this session (Polar: `/{slug}/portal?customer_session_token=…&email=…`). */
export function customerPortalUrl(baseUrl: string, organization: Pick<Organization, 'slug'>, token: string, email: string): string {
  const query = new URLSearchParams({ customer_session_token: token, email });
  return `${baseUrl.replace(/\/$/, '')}/portal/${encodeURIComponent(organization.slug)}?${query.toString()}`;
}

/**
 * Trades a live customer session token (the one in a portal link) for a new session of the same customer, with its
 * own token: the portal's cookie carries that one, so a link copied from history or a log no longer matches what
 * the browser holds. Undefined for a token that opens nothing (expired, unknown, deleted customer).
 */
export async function exchangeCustomerSession(db: Database, clock: Clock, token: string): Promise<{ session: CustomerSession; token: string } | undefined> {
  const principal = await authenticateCustomerSession(db, clock, token);
  if (!principal) return undefined;
  const organizations = new Set([principal.organizationId]);
  const { session, token: next } = await createCustomerSession(db, clock, organizations, { id: principal.customerId }, principal.returnUrl);
  return { session, token: next };
}

/** Ends a customer session (the portal's sign-out): its token opens nothing from now on. */
export async function deleteCustomerSession(db: Database, token: string): Promise<void> {
  await db(TABLE).where({ token_hash: hashToken(token) }).del();
}
