import { createApiClient } from '../api/client.js';
import { resolveCredentials } from '../auth/credentials.js';
import { describeUser, fetchSession, serializeUser } from '../auth/session.js';
import type { Command } from '../context.js';
import { notSignedIn, sessionInvalid } from '../errors.js';

export interface WhoamiOptions {
  server?: string;
  json?: boolean;
}

/** `till whoami`: who the current token signs in as; exit 3 without a valid session. */
export const whoami: Command<WhoamiOptions> = async (options, { env, out }) => {
  const { server, token } = await resolveCredentials(env, options.server);
  if (!token) throw notSignedIn(server);
  const session = await fetchSession(createApiClient({ server }), token);
  if (!session) throw sessionInvalid(server);
  out.result({ server, user: serializeUser(session.user), session: { expires_at: session.expiresAt } }, (s) =>
    [
      `Signed in to ${server} as ${s.bold(describeUser(session.user))}`,
      `  ${s.dim('user id')}  ${session.user.id}`,
      `  ${s.dim('role')}     ${session.user.role ?? '—'}`,
      ...(session.expiresAt ? [`  ${s.dim('expires')}  ${session.expiresAt}`] : []),
    ].join('\n'),
  );
};
