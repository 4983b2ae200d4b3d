import { CliError, EXIT } from '../errors.js';
import type { Env } from '../output.js';
import { openProfileStore, type ProfileStore } from './profiles.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:4010';

/** Organization access tokens start with this (tilld's ACCESS_TOKEN_PREFIX); session tokens never do. */
export const ACCESS_TOKEN_PREFIX = 'till_oat_';

export const isAccessToken = (token: string | undefined): boolean => token?.startsWith(ACCESS_TOKEN_PREFIX) === true;

/** Where a command's token came from: TILL_TOKEN, the stored profile, or nowhere. */
export type TokenSource = 'env' | 'profile' | 'none';

export interface Credentials {
  server: string;
  token?: string;
  source: TokenSource;
  /** Opened only when it had to be read (TILL_TOKEN + a known server skip it). */
  store?: ProfileStore;
}

/** Checks and normalizes a server URL: http(s) only, no trailing slash. */
export function normalizeServer(raw: string, from: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new CliError('INVALID_SERVER_URL', `${from} is not a URL: "${raw}".`, EXIT.invalid, 'Give a URL such as http://127.0.0.1:4010.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError('INVALID_SERVER_URL', `${from} must be an http:// or https:// URL, not "${raw}".`, EXIT.invalid);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new CliError('INVALID_SERVER_URL', `${from} must not carry credentials, a query or a fragment: "${raw}".`, EXIT.invalid);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/** The server a command talks to: --server, then TILL_SERVER, then the last one signed in to, then the default. */
export async function resolveServer(env: Env, flag: string | undefined, store?: ProfileStore): Promise<{ server: string; store?: ProfileStore }> {
  if (flag !== undefined) return { server: normalizeServer(flag, '--server'), store };
  if (env.TILL_SERVER) return { server: normalizeServer(env.TILL_SERVER, 'TILL_SERVER'), store };
  const opened = store ?? (await openProfileStore(env));
  return { server: opened.currentServer() ?? DEFAULT_SERVER, store: opened };
}

/** The server and token a command uses; TILL_TOKEN wins over the stored profile (for CI). */
export async function resolveCredentials(env: Env, flag: string | undefined): Promise<Credentials> {
  const { server, store } = await resolveServer(env, flag);
  if (env.TILL_TOKEN) return { server, token: env.TILL_TOKEN, source: 'env', store };
  const opened = store ?? (await openProfileStore(env));
  const profile = opened.get(server);
  return profile ? { server, token: profile.token, source: 'profile', store: opened } : { server, source: 'none', store: opened };
}

/** The token in TILL_TOKEN was refused: say so, rather than send the user to `till login` (which it overrides). */
export const tokenRefused = (server: string, token: string) =>
  new CliError(
    'INVALID_TILL_TOKEN',
    `${server} refused the ${isAccessToken(token) ? 'organization access token' : 'session token'} in TILL_TOKEN: it is unknown, expired or revoked.`,
    EXIT.notSignedIn,
    isAccessToken(token)
      ? 'Create a new one with `till tokens create` and put it in TILL_TOKEN, or unset TILL_TOKEN to use your `till login` session.'
      : 'Put a valid token in TILL_TOKEN, or unset it to use your `till login` session.',
  );
