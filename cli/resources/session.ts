import { createApiClient } from '../api/client.js';
import { isAccessToken, resolveCredentials, tokenRefused, type Credentials } from '../auth/credentials.js';
import type { ProfileStore } from '../auth/profiles.js';
import { describeAccessToken, type AccessTokenInfo } from '../auth/session.js';
import { CliError, EXIT, notSignedIn } from '../errors.js';
import { createOutput, type Env, type Output, type Streams } from '../output.js';
import { createCaller, type Caller } from './api.js';
import type { ApiObject } from './spec.js';

/** What every catalog command works with: the output, the API with the signed-in token, the config (if read). */
export interface Session {
  env: Env;
  streams: Streams;
  out: Output;
  server: string;
  api: Caller;
  /** Opened only when the credentials came from it (with TILL_TOKEN and a known server it is never read). */
  store?: ProfileStore;
  /** Set when the token is an organization access token: what it says about itself, asked for once. */
  accessToken?: () => Promise<AccessTokenInfo>;
}

export async function openSession(env: Env, streams: Streams, options: { server?: string; json?: boolean }): Promise<Session> {
  const out = createOutput(streams, env, options);
  const credentials = await resolveCredentials(env, options.server);
  if (!credentials.token) throw notSignedIn(credentials.server);
  return sessionOf(env, streams, out, credentials);
}

/**
 * A session for credentials already resolved. A token the server refuses is named by where it came from: a bad
 * TILL_TOKEN says so, instead of sending the user to `till login`.
 */
export function sessionOf(env: Env, streams: Streams, out: Output, { server, token = '', source, store }: Credentials): Session {
  const api = createCaller(createApiClient({ server }), token, source === 'env' ? () => tokenRefused(server, token) : undefined);
  let described: Promise<AccessTokenInfo> | undefined;
  const accessToken = isAccessToken(token) ? () => (described ??= describeAccessToken(api)) : undefined;
  return { env, streams, out, server, api, store, accessToken };
}

/** Slugs are lowercase; Better Auth's organization ids are mixed-case, so anything else is taken as an id. */
const SLUG = /^[a-z0-9][a-z0-9-]*$/;

/**
 * The organization id a command works in: --org, else TILL_ORG, else the default `till orgs use` stored for
 * this server, else none (the API then takes the caller's only organization, or asks for one).
 */
export async function organizationId(session: Session, flag: string | undefined): Promise<string | undefined> {
  const named = flag ?? (session.env.TILL_ORG || undefined);
  if (session.accessToken) return tokenOrganization(await session.accessToken(), named, flag !== undefined ? '--org' : 'TILL_ORG');
  if (named !== undefined) return SLUG.test(named) ? String((await findOrganization(session, named)).id) : named;
  return session.store?.defaultOrganization(session.server)?.id;
}

/**
 * An organization access token names its one organization: that is the organization, whatever the stored default.
 * --org / TILL_ORG may name it too (by id or slug, no `organizations:read` needed); naming another is a usage error.
 */
function tokenOrganization(token: AccessTokenInfo, named: string | undefined, from: string): string {
  const { organization } = token;
  if (named === undefined || named === organization.id || named === organization.slug) return organization.id;
  throw new CliError(
    'ORGANIZATION_MISMATCH',
    `${from} names organization "${named}", but the access token in TILL_TOKEN belongs to ${organization.name} (${organization.slug}, ${organization.id}).`,
    EXIT.usage,
    `Drop ${from} (the token already names its organization), or use a token of "${named}".`,
  );
}

/** An organization by slug or id, as the API shows it; exit 4 when the caller reaches none by that name. */
export async function findOrganization(session: Session, idOrSlug: string): Promise<ApiObject> {
  if (SLUG.test(idOrSlug)) {
    const page = await session.api.request<{ items: ApiObject[] }>('GET', `/v1/organizations/?slug=${encodeURIComponent(idOrSlug)}&limit=1`);
    if (page.items[0]) return page.items[0];
  }
  try {
    return await session.api.request<ApiObject>('GET', `/v1/organizations/${encodeURIComponent(idOrSlug)}`);
  } catch (error) {
    if (!(error instanceof CliError) || error.exitCode !== EXIT.notFound) throw error;
    throw new CliError('ORGANIZATION_NOT_FOUND', `No organization "${idOrSlug}" that you can reach on ${session.server}.`, EXIT.notFound, 'Run `till orgs list` to see yours.');
  }
}
