import type { ApiClient } from '../api/client.js';
import { CliError, EXIT } from '../errors.js';

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

/** The wire (snake_case) form of a user in the CLI's JSON output. */
export const serializeUser = (user: SessionUser) => ({ id: user.id, email: user.email, name: user.name, role: user.role });

/** "Ada Lovelace <ada@example.com>", or just the email when there is no name. */
export const describeUser = (user: { name: string; email: string }) => (user.name ? `${user.name} <${user.email}>` : user.email);
