import { createApiClient, type ApiClient } from '../api/client.js';
import { isAccessToken, resolveCredentials, tokenRefused } from '../auth/credentials.js';
import { describeAccessToken, describeUser, fetchSession, serializeUser, type AccessTokenInfo, type Session } from '../auth/session.js';
import type { Command } from '../context.js';
import { EXIT, isCliError } from '../errors.js';
import type { Style } from '../output.js';
import { createCaller } from '../resources/api.js';
import { CLI_VERSION } from '../version.js';
import { describeAccessTokenLines, serializeAccessToken } from './whoami.js';

export interface StatusOptions {
  server?: string;
  json?: boolean;
}

interface Health {
  reachable: boolean;
  version: string | null;
  database: 'ok' | 'unreachable' | null;
}

/**
 * `till status`: is the server up, is its database ready, which versions, who is signed in.
 * It is a report: it prints even when the server is down, and says so through the exit code
 * (8 unreachable, 7 database not ready); not being signed in is not a failure here.
 */
export const status: Command<StatusOptions> = async (options, { env, out }) => {
  const { server, token, source } = await resolveCredentials(env, options.server);
  // A report of what is up right now: one try each, so a server that is down is said at once.
  const api = createApiClient({ server, timeoutMs: 10_000, retry: { attempts: 1 } });
  const [health, session] = await Promise.all([checkHealth(api), token ? checkSession(api, token) : Promise.resolve(null)]);
  const accessToken = session && session !== 'unknown' && 'organization' in session ? session : null;
  const user = session && session !== 'unknown' && 'user' in session ? session : null;
  const report = {
    server,
    reachable: health.reachable,
    database: health.database,
    server_version: health.version,
    cli_version: CLI_VERSION,
    signed_in: session === 'unknown' ? null : session !== null,
    user: user ? serializeUser(user.user) : null,
    access_token: accessToken ? serializeAccessToken(accessToken, source) : null,
    token_source: source,
  };
  out.result(report, (s) => render(report, session, token, s));
  if (!health.reachable) return EXIT.unreachable;
  return health.database === 'ok' ? EXIT.ok : EXIT.serverError;
};

async function checkHealth(api: ApiClient): Promise<Health> {
  try {
    const [healthz, readyz] = await Promise.all([api.send('GET', '/healthz'), api.send('GET', '/readyz')]);
    const version = (healthz.body as { version?: unknown } | null)?.version;
    return {
      reachable: true,
      version: typeof version === 'string' ? version : null,
      // /readyz answers 503 with {database: 'unreachable'} when the database is down; anything else is not tilld.
      database: readyz.status === 200 ? 'ok' : readyz.status === 503 ? 'unreachable' : null,
    };
  } catch (error) {
    if (isCliError(error) && error.exitCode === EXIT.unreachable) return { reachable: false, version: null, database: null };
    throw error;
  }
}

type Signed = Session | AccessTokenInfo | null | 'unknown';

/** The session (or what an access token says of itself), null when the token is refused, 'unknown' when the server could not say. */
async function checkSession(api: ApiClient, token: string): Promise<Signed> {
  try {
    if (!isAccessToken(token)) return await fetchSession(api, token);
    return await describeAccessToken(createCaller(api, token, () => tokenRefused(api.server, token)));
  } catch (error) {
    if (isCliError(error) && error.code === 'INVALID_TILL_TOKEN') return null;
    if (isCliError(error)) return 'unknown';
    throw error;
  }
}

function render(
  report: { server: string; reachable: boolean; database: string | null; server_version: string | null; cli_version: string; token_source: string },
  session: Signed,
  token: string | undefined,
  s: Style,
): string {
  const ok = (text: string) => `${s.green('✓')} ${text}`;
  const bad = (text: string) => `${s.red('✗')} ${text}`;
  const row = (label: string, value: string) => `${s.dim(label.padEnd(10))} ${value}`;
  const fromEnv = report.token_source === 'env';
  const refused = () =>
    fromEnv ? s.red(`the ${isAccessToken(token) ? 'organization access token' : 'session token'} in TILL_TOKEN was refused (unknown, expired or revoked)`) : s.yellow('not signed in (run `till login`)');
  const signedIn =
    session === 'unknown'
      ? s.dim('unknown (the server could not say)')
      : session === null
        ? refused()
        : 'user' in session
          ? `${describeUser(session.user)}${fromEnv ? ' (token from TILL_TOKEN)' : ''}`
          : `organization access token from ${fromEnv ? 'TILL_TOKEN' : 'the stored profile'}\n${describeAccessTokenLines(session, s).map((line) => `           ${line}`).join('\n')}`;
  return [
    row('Server', `${report.server}  ${report.reachable ? ok('reachable') : bad('unreachable')}`),
    row('Database', report.database === 'ok' ? ok('ready') : report.database ? bad(report.database) : s.dim('unknown')),
    row('Versions', `server ${report.server_version ?? '?'} · cli ${report.cli_version}`),
    row('Signed in', signedIn),
  ].join('\n');
}
