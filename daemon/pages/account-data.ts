import type { Request } from 'express';
import { APIError } from 'better-auth/api';
import type { AppDeps } from '../app.js';
import { authHeaders } from './auth-calls.js';

export interface SessionRow {
  id: string;
  userAgent: string | null;
  ipAddress: string | null;
  createdAt: Date;
  expiresAt: Date;
  current: boolean;
}

export interface MembershipRow {
  id: string;
  name: string;
  slug: string;
  role: string;
}

/**
 * Better Auth lists sessions only to a fresh session (signed in within the fresh age); an older one
 * gets `stale`, and the page asks the user to sign in again.
 */
export type SessionList = { stale: false; sessions: SessionRow[] } | { stale: true };

/** The signed-in user's live sessions, by id (Better Auth's list carries no other session's token). */
export async function listSessions(deps: AppDeps, req: Request, currentSessionId: string): Promise<SessionList> {
  try {
    const sessions = await deps.auth.api.listSessions({ headers: authHeaders(req) });
    return {
      stale: false,
      sessions: sessions
        .map((session) => ({
          id: session.id,
          userAgent: session.userAgent ?? null,
          ipAddress: session.ipAddress ?? null,
          createdAt: new Date(session.createdAt),
          expiresAt: new Date(session.expiresAt),
          current: session.id === currentSessionId,
        }))
        .sort((a, b) => Number(b.current) - Number(a.current) || b.createdAt.getTime() - a.createdAt.getTime()),
    };
  } catch (error) {
    if (error instanceof APIError && error.statusCode === 403) return { stale: true };
    throw error;
  }
}

/** The organizations the user belongs to, with the user's role in each. */
export async function listMemberships(deps: AppDeps, req: Request): Promise<MembershipRow[]> {
  const headers = authHeaders(req);
  const organizations = await deps.auth.api.listOrganizations({ headers });
  return Promise.all(
    organizations.map(async (organization) => {
      const { role } = await deps.auth.api.getActiveMemberRole({ headers, query: { organizationId: organization.id } });
      return { id: organization.id, name: organization.name, slug: organization.slug, role: String(role) };
    }),
  );
}

/** One way the user signs in: the password, or a linked provider's account. */
export interface LinkedAccountRow {
  /** Better Auth's account row id (what unlinking names). */
  id: string;
  providerId: string;
  createdAt: Date;
}

/** The user's sign-in methods, oldest first. */
export async function listLinkedAccounts(deps: AppDeps, req: Request): Promise<LinkedAccountRow[]> {
  const accounts = await deps.auth.api.listUserAccounts({ headers: authHeaders(req) });
  return accounts
    .map((account) => ({ id: account.id, providerId: account.providerId, createdAt: new Date(account.createdAt) }))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}
