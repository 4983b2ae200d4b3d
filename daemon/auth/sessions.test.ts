import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { bearerClient, rawToken, signIn as signInOver, signUp, TEST_PASSWORD, type AuthResponse } from '../testing/auth-client.js';

// The daemon runs in this process, so faking Date moves its clock too: expiry, refresh and
// freshness are all decided by Date.now() inside Better Auth. Timers stay real (sockets, pools).
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const DAY = 24 * 60 * MINUTE;

const SESSION_COOKIE = 'better-auth.session_token';
const CACHE_COOKIE = 'better-auth.session_data';

const cookie = (res: AuthResponse, name: string) => res.cookies.find((c) => c.name === name);
const at = (ms: number) => vi.setSystemTime(ms);
const time = (iso: string) => new Date(iso).getTime();

let daemon: TestDaemon;
let t0: number;

beforeAll(async () => {
  daemon = await startTestDaemon();
});
afterAll(async () => {
  await daemon?.close();
});
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  t0 = Date.now();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('session lifetime (defaults: 7 days, refreshed after 1 day)', () => {
  it('issues a session that expires 7 days after sign-in, with a cookie to match', async () => {
    const { client, response } = await signUp(daemon.url);
    expect(cookie(response, SESSION_COOKIE)?.maxAge).toBe(7 * 24 * 3600);
    expect(cookie(response, CACHE_COOKIE)?.maxAge).toBe(5 * 60);
    const res = await client.get('/get-session', { disableCookieCache: true });
    expect(res.status).toBe(200);
    expect(time(res.body.session.expiresAt)).toBe(t0 + 7 * DAY);
    expect(time(res.body.session.createdAt)).toBe(t0);
  });

  it('leaves a session alone while it is younger than the update age', async () => {
    const { client } = await signUp(daemon.url);
    at(t0 + DAY - MINUTE);
    const res = await client.get('/get-session', { disableCookieCache: true });
    expect(res.status).toBe(200);
    expect(time(res.body.session.expiresAt)).toBe(t0 + 7 * DAY);
    expect(cookie(res, SESSION_COOKIE)).toBeUndefined();
  });

  it('extends the session and re-issues its cookie once it is older than the update age', async () => {
    const { client } = await signUp(daemon.url);
    const now = t0 + DAY + MINUTE;
    at(now);
    const res = await client.get('/get-session', { disableCookieCache: true });
    expect(res.status).toBe(200);
    expect(time(res.body.session.expiresAt)).toBe(now + 7 * DAY);
    expect(cookie(res, SESSION_COOKIE)?.maxAge).toBe(7 * 24 * 3600);
    // The extension is stored, not only echoed: the bearer path reads the database.
    const stored = await client.get('/get-session', { disableRefresh: true }, 'bearer');
    expect(time(stored.body.session.expiresAt)).toBe(now + 7 * DAY);
  });

  it('answers null and clears the cookie once the session has expired', async () => {
    const { client } = await signUp(daemon.url);
    at(t0 + 7 * DAY + MINUTE);
    const res = await client.get('/get-session');
    expect(res.status).toBe(200);
    expect(res.body).toBeNull();
    expect(cookie(res, SESSION_COOKIE)?.maxAge).toBe(0);
    expect(client.jar.has(SESSION_COOKIE)).toBe(false);
    // The expired row is gone as well: the token no longer works as a bearer either.
    expect((await client.get('/get-session', {}, 'bearer')).body).toBeNull();
  });
});

describe('secrets', () => {
  it('never writes a password or a session token to the log', async () => {
    const { client, token } = await signUp(daemon.url);
    await client.get('/get-session', {}, 'bearer');
    await client.post('/sign-in/email', { email: (await client.get('/get-session')).body.user.email, password: TEST_PASSWORD });
    const logged = JSON.stringify(daemon.logs);
    expect(logged).not.toContain(TEST_PASSWORD);
    expect(logged).not.toContain(rawToken(token));
  });
});

describe('cookie cache (default 5 minutes)', () => {
  it('answers from the signed cookie cache for 5 minutes, even after the session was revoked', async () => {
    const { client, token } = await signUp(daemon.url);
    // Revoked by another client holding the same session's bearer token; the browser keeps its cache cookie.
    expect((await bearerClient(daemon.url, token).post('/revoke-sessions')).body).toEqual({ status: true });
    expect((await client.get('/get-session')).body?.session).toBeTruthy();
    at(t0 + 4 * MINUTE);
    expect((await client.get('/get-session')).body?.session).toBeTruthy();
    at(t0 + 5 * MINUTE + SECOND);
    expect((await client.get('/get-session')).body).toBeNull();
  });

  it('reads the database instead of the cache with disableCookieCache=true', async () => {
    const { client, token } = await signUp(daemon.url);
    await bearerClient(daemon.url, token).post('/revoke-sessions');
    expect((await client.get('/get-session')).body?.session).toBeTruthy();
    expect((await client.get('/get-session', { disableCookieCache: true })).body).toBeNull();
  });
});

describe('freshness (default 1 day)', () => {
  it('lists sessions while the session is fresh', async () => {
    const { client } = await signUp(daemon.url);
    const res = await client.get('/list-sessions', {}, 'bearer');
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
  });

  it("refuses list-sessions with 403 'Session is not fresh' once the session is a day old", async () => {
    const { client } = await signUp(daemon.url);
    at(t0 + DAY + SECOND);
    const res = await client.get('/list-sessions', {}, 'bearer');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'SESSION_NOT_FRESH', message: 'Session is not fresh' });
  });

  it('asks a stale session for the password before deleting the account', async () => {
    const { client } = await signUp(daemon.url);
    at(t0 + DAY + SECOND);
    const refused = await client.post('/delete-user', {}, 'bearer');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'SESSION_EXPIRED', message: 'Session expired. Re-authenticate to perform this action.' });
    const deleted = await client.post('/delete-user', { password: TEST_PASSWORD }, 'bearer');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, message: 'User deleted' });
    expect((await client.get('/get-session', {}, 'bearer')).body).toBeNull();
  });

  it('asks a fresh session for the password too, since the account has one (SPEC §8)', async () => {
    const { client } = await signUp(daemon.url);
    const res = await client.post('/delete-user', {}, 'bearer');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'USER_ALREADY_HAS_PASSWORD', message: 'User already has a password. Provide that to delete the account.' });
    expect((await client.post('/delete-user', { password: TEST_PASSWORD }, 'bearer')).body).toEqual({ success: true, message: 'User deleted' });
  });
});

describe('revoking sessions', () => {
  it('revoke-session ends one of the caller’s own sessions', async () => {
    const first = await signUp(daemon.url);
    const second = await signIn(first.user.email);
    const sessions = await first.client.get('/list-sessions', {}, 'bearer');
    const other = sessions.body.find((s: { token?: string }) => rawToken(first.token) !== s.token);
    const res = await first.client.post('/revoke-session', { token: other.id }, 'bearer');
    expect(res.body).toEqual({ status: true });
    expect((await second.get('/get-session', {}, 'bearer')).body).toBeNull();
    expect((await first.client.get('/get-session', {}, 'bearer')).body?.session).toBeTruthy();
  });

  it('refuses to revoke another user’s session with 401, and the other user stays signed in', async () => {
    const mallory = await signUp(daemon.url);
    const alice = await signUp(daemon.url);
    const aliceToken = (await alice.client.get('/get-session', {}, 'bearer')).body.session.token;
    const res = await mallory.client.post('/revoke-session', { token: aliceToken }, 'bearer');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHORIZED' });
    expect((await alice.client.get('/get-session', { disableCookieCache: true }, 'bearer')).body?.session.token).toBe(aliceToken);
  });

  it('answers 400 "Session not found" to an unknown token', async () => {
    const { client } = await signUp(daemon.url);
    const res = await client.post('/revoke-session', { token: 'no-such-session-token' }, 'bearer');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'SESSION_NOT_FOUND', message: 'Session not found' });
  });

  it('revoke-sessions ends every session of the user and clears the caller’s cookie', async () => {
    const first = await signUp(daemon.url);
    const second = await signIn(first.user.email);
    const res = await first.client.post('/revoke-sessions', {});
    expect(res.body).toEqual({ status: true });
    expect(cookie(res, SESSION_COOKIE)?.maxAge).toBe(0);
    expect((await first.client.get('/get-session', {}, 'bearer')).body).toBeNull();
    expect((await second.get('/get-session', {}, 'bearer')).body).toBeNull();
  });

  it('revoke-other-sessions keeps only the current session', async () => {
    const first = await signUp(daemon.url);
    const second = await signIn(first.user.email);
    const third = await signIn(first.user.email);
    const res = await first.client.post('/revoke-other-sessions', {}, 'bearer');
    expect(res.body).toEqual({ status: true });
    expect((await first.client.get('/get-session', {}, 'bearer')).body?.session).toBeTruthy();
    expect((await second.get('/get-session', {}, 'bearer')).body).toBeNull();
    expect((await third.get('/get-session', {}, 'bearer')).body).toBeNull();
  });
});

const signIn = async (email: string) => (await signInOver(daemon.url, email)).client;
