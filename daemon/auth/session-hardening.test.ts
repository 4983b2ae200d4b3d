import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { authClient, bearerClient, rawToken, signIn, signUp, TEST_PASSWORD, uniqueEmail, type AuthClient, type SignedIn } from '../testing/auth-client.js';
import { createOrganization } from '../testing/v1.js';

const CACHE_COOKIE = 'better-auth.session_data';

let daemon: TestDaemon;
let admin: SignedIn;

beforeAll(async () => {
  daemon = await startTestDaemon();
  admin = await signUp(daemon.url); // the first account: the platform admin
});
afterAll(async () => {
  await daemon?.close();
});

/** A /v1 call presenting only the browser's cookies, sent from the daemon's own origin. */
async function v1WithCookies(client: AuthClient, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { cookie: [...client.jar].map(([k, v]) => `${k}=${v}`).join('; '), origin: daemon.url };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${daemon.url}/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json().catch(() => null), headers: res.headers };
}

describe('session lists', () => {
  it('never carry the bearer token of another session', async () => {
    const first = await signUp(daemon.url);
    const second = await signIn(daemon.url, first.user.email);
    const listed = await first.client.get('/list-sessions', {}, 'bearer');
    expect(listed.status).toBe(200);
    expect(listed.body).toHaveLength(2);
    expect(JSON.stringify(listed.body)).not.toContain(rawToken(second.token));
    const asAdmin = await admin.client.post('/admin/list-user-sessions', { userId: first.user.id });
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.body.sessions).toHaveLength(2);
    expect(JSON.stringify(asAdmin.body)).not.toContain(rawToken(second.token));
    expect(JSON.stringify(asAdmin.body)).not.toContain(rawToken(first.token));
  });

  it('still let a session be revoked by its id, or by a token the caller holds', async () => {
    const first = await signUp(daemon.url);
    const second = await signIn(daemon.url, first.user.email);
    const third = await signIn(daemon.url, first.user.email);
    const listed = await first.client.get('/list-sessions', {}, 'bearer');
    const secondId = (await second.client.get('/get-session', {}, 'bearer')).body.session.id;
    expect(listed.body.map((s: { id: string }) => s.id)).toContain(secondId);
    expect((await first.client.post('/revoke-session', { token: secondId }, 'bearer')).body).toEqual({ status: true });
    expect((await second.client.get('/get-session', {}, 'bearer')).body).toBeNull();
    expect((await first.client.post('/revoke-session', { token: rawToken(third.token) }, 'bearer')).body).toEqual({ status: true });
    expect((await third.client.get('/get-session', {}, 'bearer')).body).toBeNull();
    expect((await first.client.get('/get-session', {}, 'bearer')).body?.session).toBeTruthy();
  });

  it('let an admin revoke a user’s session by its id', async () => {
    const user = await signUp(daemon.url);
    const { sessions } = (await admin.client.post('/admin/list-user-sessions', { userId: user.user.id })).body;
    const res = await admin.client.post('/admin/revoke-user-session', { sessionToken: sessions[0].id });
    expect(res.status).toBe(200);
    expect((await user.client.get('/get-session', {}, 'bearer')).body).toBeNull();
  });
});

describe('a revoked browser session', () => {
  async function revokedBrowser(how: 'revoke' | 'sign-out' | 'ban') {
    const browser = await signUp(daemon.url);
    await createOrganization(browser, 'Revoked Co');
    // The browser's cookie cache is warm: a plain read answers from it.
    expect((await browser.client.get('/get-session')).body?.session).toBeTruthy();
    expect(browser.client.jar.has(CACHE_COOKIE)).toBe(true);
    if (how === 'revoke') await bearerClient(daemon.url, browser.token).post('/revoke-sessions');
    if (how === 'sign-out') await bearerClient(daemon.url, browser.token).post('/sign-out');
    if (how === 'ban') expect((await admin.client.post('/admin/ban-user', { userId: browser.user.id })).status).toBe(200);
    expect(browser.client.jar.has(CACHE_COOKIE)).toBe(true);
    return browser;
  }

  for (const how of ['revoke', 'sign-out', 'ban'] as const) {
    it(`writes nothing, mints no token and reaches no /v1 at once (${how})`, async () => {
      const browser = await revokedBrowser(how);
      const update = await browser.client.post('/update-user', { name: 'Still here' });
      expect(update.status).toBe(401);
      expect((await browser.client.get('/token')).status).toBe(401);
      expect((await browser.client.post('/organization/create', { name: 'Ghost', slug: `ghost-${Date.now()}` })).status).toBe(401);
      expect((await browser.client.get('/organization/list')).status).toBe(401);
      expect((await v1WithCookies(browser.client, 'GET', '/organizations/')).status).toBe(401);
      expect((await v1WithCookies(browser.client, 'POST', '/products/', { name: 'Ghost', prices: [] })).status).toBe(401);
    });
  }
});

describe('session data too large for a cookie (SPEC §8)', () => {
  it('skips the cookie cache and logs an error instead of splitting it into chunks', async () => {
    const email = uniqueEmail();
    await signUp(daemon.url, { email });
    const client = authClient(daemon.url);
    // The session records the user agent: a very long one makes the session data larger than a cookie.
    const res = await client.request('POST', '/sign-in/email', { body: { email, password: TEST_PASSWORD }, headers: { 'user-agent': `agent/${'x'.repeat(6000)}` } });
    expect(res.status).toBe(200);
    const names = res.cookies.map((c) => c.name);
    expect(names.filter((name) => name.startsWith(CACHE_COOKIE) && name !== CACHE_COOKIE)).toEqual([]);
    expect(client.jar.has(CACHE_COOKIE)).toBe(false);
    expect(daemon.logs.some((line) => line.level === 50 && /cookie/i.test(String(line.msg)) && /4093/.test(String(line.msg)))).toBe(true);
    // The browser stays signed in, read from the database.
    expect((await client.get('/get-session')).body?.user.email).toBe(email);
  });
});

describe('user fields', () => {
  it('refuse a name longer than 100 characters at sign-up, on update and from an admin', async () => {
    const long = 'N'.repeat(101);
    const signUpRes = await authClient(daemon.url).post('/sign-up/email', { email: uniqueEmail(), password: TEST_PASSWORD, name: long });
    expect(signUpRes.status).toBe(400);
    expect(signUpRes.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    const user = await signUp(daemon.url);
    const update = await user.client.post('/update-user', { name: long });
    expect(update.status).toBe(400);
    expect((await user.client.get('/get-session', { disableCookieCache: true })).body.user.name).toBe(user.user.name);
    const created = await admin.client.post('/admin/create-user', { email: uniqueEmail(), password: TEST_PASSWORD, name: long });
    expect(created.status).toBe(400);
    expect((await user.client.post('/update-user', { name: 'N'.repeat(100) })).status).toBe(200);
  });

  it('refuse control characters in a name', async () => {
    const user = await signUp(daemon.url);
    for (const name of ['bell\u0007', 'esc\u001b[31m', 'line\nbreak']) {
      const res = await user.client.post('/update-user', { name });
      expect(res.status, name).toBe(400);
    }
  });

  it('refuse an image URL longer than 2048 characters', async () => {
    const user = await signUp(daemon.url);
    const res = await user.client.post('/update-user', { image: `https://example.com/${'i'.repeat(2048)}` });
    expect(res.status).toBe(400);
  });
});

describe('admin/create-user', () => {
  it('holds the same password length rules as sign-up', async () => {
    const short = await admin.client.post('/admin/create-user', { email: uniqueEmail(), password: 'short', name: 'Short' });
    expect(short.status).toBe(400);
    expect(short.body).toMatchObject({ code: 'PASSWORD_TOO_SHORT', message: 'Password too short' });
    const long = await admin.client.post('/admin/create-user', { email: uniqueEmail(), password: 'p'.repeat(129), name: 'Long' });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ code: 'PASSWORD_TOO_LONG', message: 'Password too long' });
    const user = await signUp(daemon.url);
    const set = await admin.client.post('/admin/set-user-password', { userId: user.user.id, newPassword: 'short' });
    expect(set.status).toBe(400);
    expect(set.body).toMatchObject({ code: 'PASSWORD_TOO_SHORT' });
  });
});

describe('permission refusals', () => {
  it('answer 403, not 401, when a member may not remove another member', async () => {
    const owner = await signUp(daemon.url);
    const organizationId = await createOrganization(owner, 'Removal Co');
    const joinAs = async () => {
      const email = uniqueEmail('member');
      const invitation = await owner.client.post('/organization/invite-member', { email, role: 'member', organizationId });
      const account = await signUp(daemon.url, { email });
      const accepted = await account.client.post('/organization/accept-invitation', { invitationId: invitation.body.id });
      return { account, memberId: accepted.body.member.id as string };
    };
    const first = await joinAs();
    const second = await joinAs();
    const res = await first.account.client.post('/organization/remove-member', { memberIdOrEmail: second.memberId, organizationId });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('You are not allowed to delete this member');
  });
});
