import { createApiClient } from '../api/client.js';
import { resolveCredentials } from '../auth/credentials.js';
import type { ProfileStore } from '../auth/profiles.js';
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
}

export async function openSession(env: Env, streams: Streams, options: { server?: string; json?: boolean }): Promise<Session> {
  const out = createOutput(streams, env, options);
  const { server, token, store } = await resolveCredentials(env, options.server);
  if (!token) throw notSignedIn(server);
  return { env, streams, out, server, api: createCaller(createApiClient({ server }), token), store };
}

/** Slugs are lowercase; Better Auth's organization ids are mixed-case, so anything else is taken as an id. */
const SLUG = /^[a-z0-9][a-z0-9-]*$/;

/**
 * The organization id a command works in: --org, else TILL_ORG, else the default `till orgs use` stored for
 * this server, else none (the API then takes the caller's only organization, or asks for one).
 */
export async function organizationId(session: Session, flag: string | undefined): Promise<string | undefined> {
  const named = flag ?? (session.env.TILL_ORG || undefined);
  if (named !== undefined) return SLUG.test(named) ? String((await findOrganization(session, named)).id) : named;
  return session.store?.defaultOrganization(session.server)?.id;
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
