import type { Request } from 'express';
import { fromNodeHeaders } from 'better-auth/node';
import type { TillAuth } from '../../../core/auth/auth.js';
import type { Database } from '../../../core/db/database.js';
import type { Clock } from '../../../core/clock.js';
import { CoreError } from '../../../core/errors.js';
import type { Principal } from '../../../core/billing/shared/principal.js';
import { scopesOfRole, type Scope } from '../../../core/billing/shared/scopes.js';
import { membershipsOfUser } from '../../../core/billing/organizations/service.js';
import { authenticateAccessToken, ACCESS_TOKEN_PREFIX } from '../../../core/billing/access-tokens/service.js';
import { postedFromOrigin } from '../../pages/origin-guard.js';
import { authenticateCustomerSession, CUSTOMER_SESSION_PREFIX, type CustomerPrincipal } from '../../../core/billing/customer-sessions/service.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The token of an `Authorization: Bearer …` header. */
export const bearerOf = (header: string | undefined) => header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();

/** The organization an access token (`till_oat_…`) speaks for, with its scopes; a 401 when it is not a live token. */
export async function accessTokenPrincipal(bearer: string, deps: { db: Database; clock: Clock }): Promise<Principal> {
  const token = await authenticateAccessToken(deps.db, deps.clock, bearer);
  if (!token) throw new CoreError('unauthorized', 'INVALID_TOKEN', 'The access token is invalid, expired or revoked');
  return { kind: 'organization_token', tokenId: token.id, organizationId: token.organizationId, scopes: new Set(token.scopes) };
}

/**
 * Who calls /v1: an organization access token (`Bearer till_oat_…`), or a signed-in user's session
 * (Bearer session token or cookie), who reaches the organizations they are a member of.
 */
export async function resolvePrincipal(req: Request, deps: { db: Database; auth: TillAuth; clock: Clock; baseUrl: string }): Promise<Principal> {
  const header = req.headers.authorization;
  const bearer = bearerOf(header);
  if (bearer?.startsWith(CUSTOMER_SESSION_PREFIX)) {
    throw new CoreError('unauthorized', 'CUSTOMER_SESSION_NOT_ALLOWED', 'A customer session token opens the customer portal (/v1/customer-portal/…) only');
  }
  if (bearer?.startsWith(ACCESS_TOKEN_PREFIX)) return accessTokenPrincipal(bearer, deps);
  // A browser's cookies travel with another site's posts (another port of this host is enough for SameSite=Lax):
  // a write carried by cookies alone must come from this daemon's own pages, as the page forms must.
  if (!header && !SAFE_METHODS.has(req.method) && !postedFromOrigin(req.headers, new URL(deps.baseUrl).origin)) {
    req.log?.warn({ origin: req.headers.origin ?? null, path: req.originalUrl }, 'cross-origin cookie request refused');
    throw new CoreError('forbidden', 'CROSS_ORIGIN_REQUEST', 'This request carries session cookies but comes from another site, so it was refused. Send a Bearer token instead.');
  }
  // Read from the database, never the cookie cache: a revoked or banned session stops at once.
  const session = await deps.auth.api.getSession({ headers: fromNodeHeaders(req.headers), query: { disableCookieCache: true } });
  if (!session) throw new CoreError('unauthorized', 'NOT_AUTHENTICATED', 'Sign in, or send an organization access token as a Bearer token');
  const memberships = new Map<string, ReadonlySet<Scope>>();
  for (const { organizationId, role } of await membershipsOfUser(deps.db, session.user.id)) memberships.set(organizationId, scopesOfRole(role));
  return { kind: 'user', userId: session.user.id, sessionCreatedAt: new Date(session.session.createdAt), memberships };
}

/**
 * Who calls a /v1/customer-portal route: the customer of a live customer session (`Bearer till_cst_…`). Seller
 * credentials (access tokens, user sessions, cookies) do not open the portal: a customer session is the only key.
 */
export async function resolveCustomer(req: Request, deps: { db: Database; clock: Clock }): Promise<CustomerPrincipal> {
  const bearer = bearerOf(req.headers.authorization);
  if (!bearer) throw new CoreError('unauthorized', 'NOT_AUTHENTICATED', 'Send a customer session token as a Bearer token');
  const customer = await authenticateCustomerSession(deps.db, deps.clock, bearer);
  if (!customer) throw new CoreError('unauthorized', 'INVALID_CUSTOMER_SESSION', 'The customer session token is invalid or expired');
  return customer;
}
