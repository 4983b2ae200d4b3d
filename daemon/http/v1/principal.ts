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

/**
 * Who calls /v1: an organization access token (`Bearer till_oat_…`), or a signed-in user's session
 * (Bearer session token or cookie), who reaches the organizations they are a member of.
 */
export async function resolvePrincipal(req: Request, deps: { db: Database; auth: TillAuth; clock: Clock }): Promise<Principal> {
  const header = req.headers.authorization;
  const bearer = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  if (bearer?.startsWith(ACCESS_TOKEN_PREFIX)) {
    const token = await authenticateAccessToken(deps.db, deps.clock, bearer);
    if (!token) throw new CoreError('unauthorized', 'INVALID_TOKEN', 'The access token is invalid, expired or revoked');
    return { kind: 'organization_token', tokenId: token.id, organizationId: token.organizationId, scopes: new Set(token.scopes) };
  }
  const session = await deps.auth.api.getSession({ headers: fromNodeHeaders(req.headers) });
  if (!session) throw new CoreError('unauthorized', 'NOT_AUTHENTICATED', 'Sign in, or send an organization access token as a Bearer token');
  const memberships = new Map<string, ReadonlySet<Scope>>();
  for (const { organizationId, role } of await membershipsOfUser(deps.db, session.user.id)) memberships.set(organizationId, scopesOfRole(role));
  return { kind: 'user', userId: session.user.id, sessionCreatedAt: new Date(session.session.createdAt), memberships };
}
