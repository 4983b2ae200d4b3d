import type { Scope } from './scopes.js';

/** Who is calling /v1: a signed-in user (through their memberships) or an organization access token. */
export type Principal =
  | { kind: 'user'; userId: string; sessionCreatedAt: Date; memberships: ReadonlyMap<string, ReadonlySet<Scope>> }
  | { kind: 'organization_token'; tokenId: string; organizationId: string; scopes: ReadonlySet<Scope> };

/** The organizations a principal reaches, with what it may do in each. */
export function reachableOrganizations(principal: Principal): ReadonlyMap<string, ReadonlySet<Scope>> {
  return principal.kind === 'user' ? principal.memberships : new Map([[principal.organizationId, principal.scopes]]);
}
