import type { Request, Response } from 'express';
import type { AppDeps } from '../app.js';
import { authHeaders, forwardCookies } from './auth-calls.js';

export interface SignedInUser {
  id: string;
  name: string;
  email: string;
  role: string;
}

export interface SignedIn {
  sessionId: string;
  user: SignedInUser;
}

/**
 * The browser's session, read from the database rather than the signed cookie cache, so a session
 * revoked elsewhere stops working on these pages at once. Cookie changes (refresh, clearing) are passed on.
 */
export async function currentSession(deps: AppDeps, req: Request, res: Response): Promise<SignedIn | null> {
  if (!req.headers.cookie) return null;
  const { headers, response } = await deps.auth.api.getSession({
    headers: authHeaders(req),
    query: { disableCookieCache: true },
    returnHeaders: true,
  });
  forwardCookies(headers, res);
  if (!response) return null;
  const { session, user } = response;
  return {
    sessionId: session.id,
    user: { id: user.id, name: user.name, email: user.email, role: String(user.role ?? 'user') },
  };
}

/** The sign-in page, coming back to `returnTo` (a local path) afterwards. */
export function signInUrl(returnTo: string): string {
  return `/sign-in?next=${encodeURIComponent(returnTo)}`;
}
