import type { Scope } from './scopes.js';

/**
 * Who is calling /v1: a signed-in user (through their memberships), an organization access token, or nobody
 * (the public routes a customer's browser or a licensed app calls: checkout client calls, license-key checks).
 */
export type Principal =
  | { kind: 'user'; userId: string; sessionCreatedAt: Date; memberships: ReadonlyMap<string, ReadonlySet<Scope>> }
  | { kind: 'organization_token'; tokenId: string; organizationId: string; scopes: ReadonlySet<Scope> }
  | { kind: 'anonymous' };

export const ANONYMOUS: Principal = { kind: 'anonymous' };

/** The organizations a principal reaches, with what it may do in each. */
export function reachableOrganizations(principal: Principal): ReadonlyMap<string, ReadonlySet<Scope>> {
  if (principal.kind === 'anonymous') return new Map();
  return principal.kind === 'user' ? principal.memberships : new Map([[principal.organizationId, principal.scopes]]);
}
