import { randomBytes } from 'node:crypto';
import { Agent, fetch } from 'undici';
import { AUTH_BASE_PATH } from '../../core/auth/auth.js';

/** How a request proves who it is: the cookie jar (a browser), the bearer token (the CLI), or nothing. */
export type Credentials = 'cookies' | 'bearer' | 'none';

export interface AuthResponse {
  status: number;
  /** The parsed JSON answer; `any` because tests read whatever shape each endpoint returns. */
  body: any;
  headers: Headers;
  /** Set-Cookie lines of this response, parsed. */
  cookies: SetCookie[];
}

export interface SetCookie {
  name: string;
  value: string;
  /** Max-Age in seconds, when the server sent one. */
  maxAge?: number;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean>;
  body?: unknown;
  headers?: Record<string, string>;
  as?: Credentials;
}

/** One client of /api/auth over real HTTP: a cookie jar plus the bearer token Better Auth hands out. */
export interface AuthClient {
  readonly url: string;
  /** Bearer token from the last `set-auth-token` header (a signed session token). */
  token?: string;
  /** Cookie name → value, kept as a browser would (cleared cookies are removed). */
  readonly jar: Map<string, string>;
  request(method: 'GET' | 'POST', path: string, options?: RequestOptions): Promise<AuthResponse>;
  get(path: string, query?: RequestOptions['query'], as?: Credentials): Promise<AuthResponse>;
  post(path: string, body?: unknown, as?: Credentials): Promise<AuthResponse>;
}

export interface ClientOptions {
  /** Credentials sent when a request does not say (default: cookies). */
  as?: Credentials;
  /** Local address to connect from (e.g. 127.0.0.2), so rate-limit tests can be distinct clients. */
  localAddress?: string;
}

/** A fresh client of the daemon at `url` (its listening URL). */
export function authClient(url: string, options: ClientOptions = {}): AuthClient {
  const dispatcher = options.localAddress ? new Agent({ localAddress: options.localAddress }) : undefined;
  const client: AuthClient = {
    url,
    jar: new Map(),
    async request(method, path, { query, body, headers = {}, as = options.as ?? 'cookies' } = {}) {
      const target = new URL(`${AUTH_BASE_PATH}${path}`, url);
      for (const [key, value] of Object.entries(query ?? {})) target.searchParams.set(key, String(value));
      const sent: Record<string, string> = { ...headers };
      // A browser sends its Origin on POST; Better Auth refuses cookie-carrying POSTs without one.
      if (method === 'POST' && !('origin' in lower(sent))) sent.origin = url;
      if (body !== undefined && !('content-type' in lower(sent))) sent['content-type'] = 'application/json';
      if (as === 'cookies' && client.jar.size > 0) sent.cookie = [...client.jar].map(([k, v]) => `${k}=${v}`).join('; ');
      if (as === 'bearer' && client.token) sent.authorization = `Bearer ${client.token}`;
      const response = await fetch(target, {
        method,
        headers: sent,
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        dispatcher,
      });
      const cookies = response.headers.getSetCookie().map(parseSetCookie);
      for (const cookie of cookies) {
        if (cookie.value === '' || cookie.maxAge === 0) client.jar.delete(cookie.name);
        else client.jar.set(cookie.name, cookie.value);
      }
      const token = response.headers.get('set-auth-token');
      if (token) client.token = token;
      const text = await response.text();
      return { status: response.status, body: parseBody(text), headers: response.headers as unknown as Headers, cookies };
    },
    get: (path, query, as) => client.request('GET', path, { query, as }),
    post: (path, body, as) => client.request('POST', path, { body: body ?? {}, as }),
  };
  return client;
}

/** A separate client (like the CLI) that presents only this bearer token: its cookies never touch a browser's jar. */
export function bearerClient(url: string, token: string): AuthClient {
  const client = authClient(url, { as: 'bearer' });
  client.token = token;
  return client;
}

/** A unique address for this test run, so tests never collide on an email. */
export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}@example.test`;
}

export const TEST_PASSWORD = 'correct horse battery staple';

export interface SignedIn {
  client: AuthClient;
  user: { id: string; email: string; name: string; role?: string };
  /** The bearer token (`set-auth-token`) of the new session. */
  token: string;
  /** The sign-up or sign-in answer itself (its cookies, headers). */
  response: AuthResponse;
}

/** Signs up a new account over HTTP; the returned client holds its session cookies and bearer token. */
export async function signUp(
  url: string,
  input: { email?: string; password?: string; name?: string } = {},
  options: ClientOptions = {},
): Promise<SignedIn> {
  const client = authClient(url, options);
  const email = input.email ?? uniqueEmail();
  const res = await client.post('/sign-up/email', { email, password: input.password ?? TEST_PASSWORD, name: input.name ?? email.split('@')[0] });
  if (res.status !== 200 || !client.token) throw new Error(`sign-up of ${email} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { client, user: res.body.user, token: client.token, response: res };
}

/** Signs in over HTTP with email and password; a new client (and so a new session) each time. */
export async function signIn(url: string, email: string, password = TEST_PASSWORD, options: ClientOptions = {}): Promise<SignedIn> {
  const client = authClient(url, options);
  const res = await client.post('/sign-in/email', { email, password });
  if (res.status !== 200 || !client.token) throw new Error(`sign-in of ${email} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { client, user: res.body.user, token: client.token, response: res };
}

/** The session token itself (the part of a signed token before its signature), as stored in the database. */
export function rawToken(signed: string): string {
  return decodeURIComponent(signed).split('.')[0]!;
}

function parseSetCookie(line: string): SetCookie {
  const [pair = '', ...attributes] = line.split(';');
  const eq = pair.indexOf('=');
  const cookie: SetCookie = { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim() };
  for (const attribute of attributes) {
    const [key = '', value = ''] = attribute.split('=');
    if (key.trim().toLowerCase() === 'max-age') cookie.maxAge = Number(value.trim());
  }
  return cookie;
}

function parseBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}
