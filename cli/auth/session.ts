import type { ApiClient } from '../api/client.js';
import { CliError, EXIT } from '../errors.js';
import type { ProfileStore } from './profiles.js';

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: string | null;
}

export interface Session {
  user: SessionUser;
  /** ISO 8601, or null if the server did not say. */
  expiresAt: string | null;
}

/** What an organization access token says about itself (GET /v1/organization-access-tokens/current). */
export interface AccessTokenInfo {
  id: string;
  scopes: string[];
  expires_at: string | null;
  organization: { id: string; name: string; slug: string };
}

/** The calling token's organization, scopes and expiry; it needs no scope. A refused token throws as `api` maps a 401. */
export function describeAccessToken(api: { request<T>(method: 'GET', path: string): Promise<T> }): Promise<AccessTokenInfo> {
  return api.request<AccessTokenInfo>('GET', '/v1/organization-access-tokens/current');
}

/** The session a token stands for, or null when the server no longer knows it. */
export async function fetchSession(api: ApiClient, token: string): Promise<Session | null> {
  const body = await api.get<{ user?: Record<string, unknown>; session?: Record<string, unknown> } | null>('/api/auth/get-session', { token });
  if (!body || !body.user) return null;
  const { user, session } = body;
  if (typeof user.id !== 'string' || typeof user.email !== 'string') {
    throw new CliError('BAD_RESPONSE', `${api.server} returned a session without a user.`, EXIT.serverError);
  }
  return {
    user: { id: user.id, email: user.email, name: typeof user.name === 'string' ? user.name : '', role: typeof user.role === 'string' ? user.role : null },
    expiresAt: typeof session?.expiresAt === 'string' ? session.expiresAt : null,
  };
}

/** Ends the session on the server. Better Auth answers success even for a session it no longer has. */
export async function signOut(api: ApiClient, token: string): Promise<void> {
  await api.post('/api/auth/sign-out', {}, { token });
}

/**
 * Keeps a session the device flow issued as the server's profile (making it the current server) and signs out
 * the session it replaces, which would otherwise live on unused until it expires. `till login` and the terminal
 * UI's in-app sign-in both end here.
 */
export async function storeSignedInSession(api: ApiClient, store: ProfileStore, token: string): Promise<Session> {
  const session = await fetchSession(api, token);
  if (!session) throw new CliError('LOGIN_FAILED', `${api.server} issued a session it then did not recognise.`, EXIT.serverError);
  const previous = store.get(api.server);
  store.save(api.server, { token, user: { id: session.user.id, email: session.user.email, name: session.user.name }, signed_in_at: new Date().toISOString() });
  if (previous && previous.token !== token) await signOut(api, previous.token).catch(() => {});
  return session;
}

/** The wire (snake_case) form of a user in the CLI's JSON output. */
export const serializeUser = (user: SessionUser) => ({ id: user.id, email: user.email, name: user.name, role: user.role });

/** "Ada Lovelace <ada@example.com>", or just the email when there is no name. */
export const describeUser = (user: { name: string; email: string }) => (user.name ? `${user.name} <${user.email}>` : user.email);
