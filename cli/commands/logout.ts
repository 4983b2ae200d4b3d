import { createApiClient } from '../api/client.js';
import { resolveCredentials } from '../auth/credentials.js';
import { signOut } from '../auth/session.js';
import type { Command } from '../context.js';
import { notSignedIn } from '../errors.js';

export interface LogoutOptions {
  server?: string;
  /** Forget the stored session without asking the server to end it (the server is gone for good). */
  local?: boolean;
  json?: boolean;
}

/** `till logout`: ends the session on the server, then forgets it here. */
export const logout: Command<LogoutOptions> = async (options, { env, out }) => {
  const { server, token, source, store } = await resolveCredentials(env, options.server);
  if (!token) throw notSignedIn(server);
  // Revoke first: if the server cannot be reached, the token is kept so that logout can be retried.
  if (!options.local) await signOut(createApiClient({ server }), token);
  // With TILL_TOKEN the stored session is a different one; it is forgotten only if it is the same token.
  const forgotten = store !== undefined && store.get(server)?.token === token;
  if (forgotten) store.forget(server);
  out.result({ server, revoked: !options.local, forgotten, token_source: source }, (s) => {
    const what = options.local ? 'Forgot the session (the server was not told)' : 'Signed out';
    const suffix = source === 'env' && !forgotten ? ' (the TILL_TOKEN session; nothing was stored here)' : '';
    return `${s.green('✓')} ${what} of ${server}${suffix}`;
  });
};
