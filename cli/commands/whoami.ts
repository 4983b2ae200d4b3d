import { createApiClient } from '../api/client.js';
import { isAccessToken, resolveCredentials, tokenRefused } from '../auth/credentials.js';
import { describeAccessToken, describeUser, fetchSession, serializeUser, type AccessTokenInfo } from '../auth/session.js';
import type { Command } from '../context.js';
import { notSignedIn, sessionInvalid } from '../errors.js';
import type { Style } from '../output.js';
import { createCaller } from '../resources/api.js';

export interface WhoamiOptions {
  server?: string;
  json?: boolean;
}

/**
 * `till whoami`: who the current token signs in as; exit 3 without a valid session. An organization access token
 * in TILL_TOKEN is described as gh describes GH_TOKEN: its organization, scopes and expiry.
 */
export const whoami: Command<WhoamiOptions> = async (options, { env, out }) => {
  const { server, token, source } = await resolveCredentials(env, options.server);
  if (!token) throw notSignedIn(server);
  const api = createApiClient({ server });
  if (isAccessToken(token)) {
    const info = await describeAccessToken(createCaller(api, token, () => tokenRefused(server, token)));
    out.result({ server, user: null, access_token: serializeAccessToken(info, source) }, (s) =>
      [`Using an organization access token from ${source === 'env' ? 'TILL_TOKEN' : 'the stored profile'} on ${server}`, ...describeAccessTokenLines(info, s)].join('\n'),
    );
    return;
  }
  const session = await fetchSession(api, token);
  if (!session) throw source === 'env' ? tokenRefused(server, token) : sessionInvalid(server);
  out.result({ server, user: serializeUser(session.user), session: { expires_at: session.expiresAt } }, (s) =>
    [
      `Signed in to ${server} as ${s.bold(describeUser(session.user))}${source === 'env' ? ' (token from TILL_TOKEN)' : ''}`,
      `  ${s.dim('user id')}  ${session.user.id}`,
      `  ${s.dim('role')}     ${session.user.role ?? '—'}`,
      ...(session.expiresAt ? [`  ${s.dim('expires')}  ${session.expiresAt}`] : []),
    ].join('\n'),
  );
};

/** The wire form of an access token's description in the CLI's JSON output (whoami, status). */
export const serializeAccessToken = (info: AccessTokenInfo, source: string) => ({
  id: info.id,
  source: source === 'env' ? 'TILL_TOKEN' : source,
  organization: info.organization,
  scopes: info.scopes,
  expires_at: info.expires_at,
});

/** Organization, scopes and expiry, one indented line each. */
export function describeAccessTokenLines(info: AccessTokenInfo, s: Style): string[] {
  return [
    `  ${s.dim('organization')}  ${s.bold(info.organization.name)} (${info.organization.slug}, ${info.organization.id})`,
    `  ${s.dim('scopes')}        ${info.scopes.join(', ')}`,
    `  ${s.dim('expires')}       ${info.expires_at ?? 'never'}`,
  ];
}
