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
  org?: string;
}

/** How an organization takes money (GET /v1/organizations/{id}/payment-mode). */
interface OrganizationPayments {
  organization_id: string;
  name: string | null;
  slug: string | null;
  mode: 'sandbox' | 'stripe_live' | 'stripe_test' | 'not_configured';
}

const MODE_TEXT: Record<OrganizationPayments['mode'], string> = {
  sandbox: 'sandbox (test cards, no real money)',
  stripe_live: 'Stripe, live mode (real payments)',
  stripe_test: 'Stripe, test mode (no real money)',
  not_configured: 'not configured: paid checkouts are refused (configure Stripe, or `till clock sandbox on`)',
};

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
  const { server, token, source, store } = await resolveCredentials(env, options.server);
  // A report of what is up right now: one try each, so a server that is down is said at once.
  const api = createApiClient({ server, timeoutMs: 10_000, retry: { attempts: 1 } });
  const [health, session] = await Promise.all([checkHealth(api), token ? checkSession(api, token) : Promise.resolve(null)]);
  const accessToken = session && session !== 'unknown' && 'organization' in session ? session : null;
  const user = session && session !== 'unknown' && 'user' in session ? session : null;
  const payments = token && (accessToken || user) ? await paymentModes(api, token, accessToken, options.org ?? (env.TILL_ORG || undefined) ?? store?.defaultOrganization(server)?.id) : [];
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
    payments,
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

/**
 * Which mode each organization takes money in: the access token's organization, or the one named (--org,
 * TILL_ORG, the `till orgs use` default), else each of the user's organizations (the first 20). An organization
 * the server cannot say about is left out: this is a report, not a check.
 */
async function paymentModes(api: ApiClient, token: string, accessToken: AccessTokenInfo | null, named: string | undefined): Promise<OrganizationPayments[]> {
  let organizations: { id: string; name: string | null; slug: string | null }[];
  if (accessToken) organizations = [accessToken.organization];
  else {
    const query = named === undefined ? '?limit=20' : /^[a-z0-9][a-z0-9-]*$/.test(named) ? `?slug=${encodeURIComponent(named)}&limit=1` : null;
    const listed = query ? await api.send('GET', `/v1/organizations/${query}`, { token }) : null;
    const items = (listed?.status === 200 ? ((listed.body as { items?: { id: string; name?: string; slug?: string }[] }).items ?? []) : []).map((item) => ({ id: item.id, name: item.name ?? null, slug: item.slug ?? null }));
    organizations = items.length || named === undefined ? items : [{ id: named, name: null, slug: null }];
  }
  const answers = await Promise.all(
    organizations.map(async (organization) => {
      const res = await api.send('GET', `/v1/organizations/${encodeURIComponent(organization.id)}/payment-mode`, { token }).catch(() => null);
      const mode = res?.status === 200 ? (res.body as { mode?: OrganizationPayments['mode'] }).mode : undefined;
      return mode && mode in MODE_TEXT ? { organization_id: organization.id, name: organization.name, slug: organization.slug, mode } : null;
    }),
  );
  return answers.filter((answer): answer is OrganizationPayments => answer !== null);
}

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
  report: { server: string; reachable: boolean; database: string | null; server_version: string | null; cli_version: string; token_source: string; payments: OrganizationPayments[] },
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
    ...report.payments.map((item, index) =>
      row(index === 0 ? 'Payments' : '', `${item.slug ?? item.organization_id}: ${item.mode === 'not_configured' ? s.yellow(MODE_TEXT[item.mode]) : MODE_TEXT[item.mode]}`),
    ),
  ].join('\n');
}
