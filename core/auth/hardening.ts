import type { BetterAuthPlugin } from 'better-auth';
import { APIError, createAuthMiddleware, isAPIError } from 'better-auth/api';
import { expireCookie, parseCookies } from 'better-auth/cookies';
import { findUnstorable } from '../validation/unstorable.js';

type HookContext = Parameters<Parameters<typeof createAuthMiddleware>[0]>[0];

/** SPEC §9: the largest session-data cookie a browser keeps (Safari's floor). */
export const SESSION_COOKIE_LIMIT = 4093;

/** Fields that name where a browser goes next: a URL, never a document. */
const URL_FIELDS = ['callbackURL', 'errorCallbackURL', 'newUserCallbackURL', 'redirectTo', 'redirectURI'];
/** Longest URL accepted in a field of URL_FIELDS (what browsers and proxies reliably carry). */
export const MAX_URL_LENGTH = 2048;
/**
 * Longest text accepted in any field of any auth route (an ID token from a provider is the longest real one, a few
 * KiB). Better Auth copies some fields into headers (the OAuth callback redirects with them): unbounded, they make
 * answers no client reads.
 */
export const MAX_TEXT_LENGTH = 16 * 1024;

/**
 * Input no auth route can use: U+0000 (PostgreSQL text cannot hold it), absurd nesting, text longer than
 * MAX_TEXT_LENGTH and a redirect URL longer than any real one. Refused for every route before anything reaches the database or a log line.
 */
const unusableInput = createAuthMiddleware(async (ctx) => {
  // A POST's body is a JSON object (daemon/http/auth-handler.ts sends `{}` for none); Better Auth reads its fields unchecked.
  const posted = ctx.request?.method === 'POST' || ctx.method === 'POST';
  if (posted && ctx.body !== undefined && (ctx.body === null || typeof ctx.body !== 'object' || Array.isArray(ctx.body))) {
    throw validationError(['body'], 'Expected a JSON object');
  }
  for (const [location, value] of [['body', ctx.body], ['query', ctx.query]] as const) {
    if (value && typeof value === 'object') {
      for (const field of URL_FIELDS) {
        const url = (value as Record<string, unknown>)[field];
        if (typeof url === 'string' && url.length > MAX_URL_LENGTH) throw validationError([location, field], `At most ${MAX_URL_LENGTH} characters`);
      }
    }
    const problem = findUnstorable(value, location, { maxTextLength: MAX_TEXT_LENGTH });
    if (problem) throw validationError(problem.loc, problem.msg);
  }
});

function validationError(loc: readonly (string | number)[], message: string): APIError {
  return new APIError('BAD_REQUEST', { code: 'VALIDATION_ERROR', message: `[${loc.join('.')}] ${message}` });
}

/**
 * The signed session-data cookie (the cookie cache) is believed only by `GET /get-session`, which tells the
 * browser nothing its own cookie does not hold. Every other route (writes, `/token`, lists) reads the session
 * from the database, so a revoked, signed-out or banned session stops at once.
 */
const authoritativeSession = createAuthMiddleware(async (ctx) => {
  const cookie = ctx.headers?.get('cookie');
  if (!cookie) return;
  const cacheName = ctx.context.authCookies.sessionData.name;
  const isCache = (name: string) => name === cacheName || name.startsWith(`${cacheName}.`);
  const cookies = [...parseCookies(cookie)];
  if (!cookies.some(([name]) => isCache(name))) return;
  const headers = new Headers(ctx.headers);
  headers.set('cookie', cookies.filter(([name]) => !isCache(name)).map(([name, value]) => `${name}=${value}`).join('; '));
  return { context: { headers } };
});

/**
 * SPEC §8: session data too large for one cookie is not cached (Better Auth would split it into numbered
 * chunks, and enough of them make every request too large for the server: 431). The error is logged.
 */
const boundedSessionCookie = createAuthMiddleware(async (ctx) => {
  const headers = ctx.context.responseHeaders;
  const lines = headers?.getSetCookie() ?? [];
  const cacheName = ctx.context.authCookies.sessionData.name;
  const chunks = lines.filter((line) => line.startsWith(`${cacheName}.`));
  if (!headers || chunks.length === 0) return;
  const size = chunks.reduce((total, line) => total + (line.split(';')[0]!.length - line.indexOf('=') - 1), 0);
  headers.delete('set-cookie');
  for (const line of lines) if (!line.startsWith(`${cacheName}=`) && !line.startsWith(`${cacheName}.`)) headers.append('set-cookie', line);
  expireCookie(ctx, ctx.context.authCookies.sessionData);
  ctx.context.logger.error(`Session data of ${size} bytes is over the ${SESSION_COOKIE_LIMIT}-byte cookie limit: the cookie cache was skipped for this session`);
});

/** Session lists show every session but the caller's own without its token: a token is a credential. */
const sessionListsWithoutTokens = createAuthMiddleware(async (ctx) => {
  const returned = ctx.context.returned;
  if (isAPIError(returned) || !returned) return;
  const own = ctx.context.session?.session.token;
  const strip = (session: { token?: string }) => {
    if (session.token === own && ctx.path === '/list-sessions') return session;
    const { token: _token, ...rest } = session;
    return rest;
  };
  if (Array.isArray(returned)) return ctx.json(returned.map(strip));
  const sessions = (returned as { sessions?: { token?: string }[] }).sessions;
  if (Array.isArray(sessions)) return ctx.json({ ...(returned as object), sessions: sessions.map(strip) });
});

/**
 * Sessions are named by id in lists (tokens are not shown), so an admin revokes by id as well as by token.
 * The id is turned into the session's token here; whether the caller may is decided by the route itself.
 * (`/revoke-session` does the same in its own guard, core/auth/auth.ts, which decides who may.)
 */
const revokeById = createAuthMiddleware(async (ctx) => {
  const body = (ctx.body ?? {}) as Record<string, unknown>;
  const value = body.sessionToken;
  if (typeof value !== 'string' || !value) return;
  if (await ctx.context.internalAdapter.findSession(value)) return;
  const byId = await ctx.context.adapter.findOne<{ token: string }>({ model: 'session', where: [{ field: 'id', value }] });
  if (byId) return { context: { body: { ...body, sessionToken: byId.token } } };
});

/** Codes Better Auth answers with 401 although the caller is signed in and simply may not: 403 (401 means signed out). */
const PERMISSION_CODES = new Set(['YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER', 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION']);

const permissionRefusalsAre403 = createAuthMiddleware(async (ctx) => {
  const returned = ctx.context.returned;
  if (!isAPIError(returned) || returned.statusCode !== 401) return;
  const code = (returned.body as { code?: string } | undefined)?.code;
  if (!code || !PERMISSION_CODES.has(code)) return;
  const body = { code, message: returned.body?.message ?? returned.message };
  // Over HTTP the endpoint's status would win over a replaced error, so the answer is given whole.
  if (ctx.request) return new Response(JSON.stringify(body), { status: 403, headers: { 'content-type': 'application/json' } });
  throw new APIError('FORBIDDEN', body);
});

/** Better Auth's admin create-user checks only the longest password; the shortest holds too, as at sign-up. */
const adminPasswordLength = (minPasswordLength: number) =>
  createAuthMiddleware(async (ctx) => {
    const password = (ctx.body as { password?: unknown } | undefined)?.password;
    if (typeof password === 'string' && password.length < minPasswordLength) {
      throw new APIError('BAD_REQUEST', { code: 'PASSWORD_TOO_SHORT', message: 'Password too short' });
    }
  });

const always = () => true;
const onPath = (...paths: string[]) => (ctx: HookContext | { path?: string }) => paths.includes(ctx.path ?? '');

/** Till's hardening of every Better Auth route: input, session authority, cookie size, tokens in lists, statuses. */
export const hardening = (settings: { minPasswordLength: number }) =>
  ({
    id: 'till-hardening',
    hooks: {
      before: [
        { matcher: always, handler: unusableInput },
        { matcher: (ctx: { path?: string }) => ctx.path !== '/get-session', handler: authoritativeSession },
        { matcher: onPath('/admin/revoke-user-session'), handler: revokeById },
        { matcher: onPath('/admin/create-user'), handler: adminPasswordLength(settings.minPasswordLength) },
      ],
      after: [
        { matcher: onPath('/list-sessions', '/admin/list-user-sessions'), handler: sessionListsWithoutTokens },
        { matcher: always, handler: permissionRefusalsAre403 },
        { matcher: always, handler: boundedSessionCookie },
      ],
    },
  }) satisfies BetterAuthPlugin;
