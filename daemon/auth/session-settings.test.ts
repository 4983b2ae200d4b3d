import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { bearerClient, signUp, type AuthResponse } from '../testing/auth-client.js';

// Each TILL_SESSION_* variable (seconds) changes what the daemon does, not only what it reports.
// Date is faked in-process so the daemon's clock moves with the test's.
const SECOND = 1000;
const DAY = 24 * 3600 * SECOND;
const SESSION_COOKIE = 'better-auth.session_token';
const CACHE_COOKIE = 'better-auth.session_data';
const cookie = (res: AuthResponse, name: string) => res.cookies.find((c) => c.name === name);
const time = (iso: string) => new Date(iso).getTime();

let daemon: TestDaemon | undefined;
let t0: number;

async function start(env: Record<string, string>) {
  daemon = await startTestDaemon(env);
  return daemon;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  t0 = Date.now();
});
afterEach(async () => {
  vi.useRealTimers();
  await daemon?.close();
  daemon = undefined;
});

describe('TILL_SESSION_EXPIRES_IN and TILL_SESSION_UPDATE_AGE', () => {
  it('gives sessions the configured lifetime and refreshes them after the configured age', async () => {
    const { url } = await start({ TILL_SESSION_EXPIRES_IN: '3600', TILL_SESSION_UPDATE_AGE: '600' });
    const { client, response } = await signUp(url);
    expect(cookie(response, SESSION_COOKIE)?.maxAge).toBe(3600);
    const fresh = await client.get('/get-session', { disableCookieCache: true });
    expect(time(fresh.body.session.expiresAt)).toBe(t0 + 3600 * SECOND);

    vi.setSystemTime(t0 + 599 * SECOND);
    const unchanged = await client.get('/get-session', { disableCookieCache: true });
    expect(time(unchanged.body.session.expiresAt)).toBe(t0 + 3600 * SECOND);

    vi.setSystemTime(t0 + 601 * SECOND);
    const refreshed = await client.get('/get-session', { disableCookieCache: true });
    expect(time(refreshed.body.session.expiresAt)).toBe(t0 + (601 + 3600) * SECOND);
    expect(cookie(refreshed, SESSION_COOKIE)?.maxAge).toBe(3600);

    vi.setSystemTime(t0 + (601 + 3601) * SECOND);
    expect((await client.get('/get-session', { disableCookieCache: true })).body).toBeNull();
  });
});

describe('TILL_SESSION_FRESH_AGE', () => {
  it('makes a session stale after the configured number of seconds', async () => {
    const { url } = await start({ TILL_SESSION_FRESH_AGE: '60' });
    const { client } = await signUp(url);
    vi.setSystemTime(t0 + 59 * SECOND);
    expect((await client.get('/list-sessions', {}, 'bearer')).status).toBe(200);
    vi.setSystemTime(t0 + 61 * SECOND);
    const stale = await client.get('/list-sessions', {}, 'bearer');
    expect(stale.status).toBe(403);
    expect(stale.body.message).toBe('Session is not fresh');
  });

  it('turns the freshness check off when 0', async () => {
    const { url } = await start({ TILL_SESSION_FRESH_AGE: '0' });
    const { client } = await signUp(url);
    vi.setSystemTime(t0 + 6 * DAY);
    expect((await client.get('/list-sessions', {}, 'bearer')).status).toBe(200);
    // Never stale, so delete-user goes straight to its own rule: the account's password.
    expect((await client.post('/delete-user', {}, 'bearer')).body).toMatchObject({ code: 'USER_ALREADY_HAS_PASSWORD' });
  });
});

describe('TILL_SESSION_COOKIE_CACHE_MAX_AGE', () => {
  it('caches the session in the cookie for the configured seconds', async () => {
    const { url } = await start({ TILL_SESSION_COOKIE_CACHE_MAX_AGE: '60' });
    const { client, token, response } = await signUp(url);
    expect(cookie(response, CACHE_COOKIE)?.maxAge).toBe(60);
    await bearerClient(url, token).post('/revoke-sessions');
    vi.setSystemTime(t0 + 59 * SECOND);
    expect((await client.get('/get-session')).body?.session).toBeTruthy();
    vi.setSystemTime(t0 + 61 * SECOND);
    expect((await client.get('/get-session')).body).toBeNull();
  });

  it('turns the cookie cache off when 0, so a revoked session ends at once', async () => {
    const { url } = await start({ TILL_SESSION_COOKIE_CACHE_MAX_AGE: '0' });
    const { client, token, response } = await signUp(url);
    expect(cookie(response, CACHE_COOKIE)).toBeUndefined();
    await bearerClient(url, token).post('/revoke-sessions');
    expect((await client.get('/get-session')).body).toBeNull();
  });
});
