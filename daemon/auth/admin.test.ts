import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminStatements } from '../../core/auth/access.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { authClient, signIn, signUp, TEST_PASSWORD, uniqueEmail, type SignedIn } from '../testing/auth-client.js';

let daemon: TestDaemon;
let admin: SignedIn;
let user: SignedIn;

beforeAll(async () => {
  daemon = await startTestDaemon();
  admin = await signUp(daemon.url);
  user = await signUp(daemon.url);
});
afterAll(async () => {
  await daemon?.close();
});

describe('roles', () => {
  it('makes the first account ever created an admin, and every later one a user', async () => {
    expect(admin.user.role).toBe('admin');
    expect(user.user.role).toBe('user');
    expect((await signUp(daemon.url)).user.role).toBe('user');
  });

  // SPEC §6: the admin role holds every user and session action, the user role none.
  const permissions = Object.entries(adminStatements).flatMap(([resource, actions]) => actions.map((action) => [resource, action] as const));
  it.each(permissions)('grants %s:%s to the admin role and not to the user role', async (resource, action) => {
    const body = { permissions: { [resource]: [action] } };
    expect((await admin.client.post('/admin/has-permission', body)).body).toEqual({ error: null, success: true });
    expect((await user.client.post('/admin/has-permission', body)).body).toEqual({ error: null, success: false });
  });
});

describe('a plain user', () => {
  const refusals: [method: 'GET' | 'POST', path: string, body: (id: string) => object | undefined, message: string][] = [
    ['GET', '/admin/list-users', () => undefined, 'You are not allowed to list users'],
    ['GET', '/admin/get-user', () => undefined, 'You are not allowed to get user'],
    ['POST', '/admin/create-user', () => ({ email: uniqueEmail(), password: TEST_PASSWORD, name: 'X' }), 'You are not allowed to create users'],
    ['POST', '/admin/set-role', (id) => ({ userId: id, role: 'admin' }), 'You are not allowed to change users role'],
    ['POST', '/admin/ban-user', (id) => ({ userId: id }), 'You are not allowed to ban users'],
    ['POST', '/admin/unban-user', (id) => ({ userId: id }), 'You are not allowed to ban users'],
    ['POST', '/admin/impersonate-user', (id) => ({ userId: id }), 'You are not allowed to impersonate users'],
    ['POST', '/admin/remove-user', (id) => ({ userId: id }), 'You are not allowed to delete users'],
    ['POST', '/admin/set-user-password', (id) => ({ userId: id, newPassword: 'another long password' }), 'You are not allowed to set users password'],
    ['POST', '/admin/update-user', (id) => ({ userId: id, data: { name: 'Renamed' } }), 'You are not allowed to update users'],
    ['POST', '/admin/list-user-sessions', (id) => ({ userId: id }), 'You are not allowed to list users sessions'],
    ['POST', '/admin/revoke-user-sessions', (id) => ({ userId: id }), 'You are not allowed to revoke users sessions'],
  ];

  it.each(refusals)('is refused %s %s with 403 and its message', async (method, path, body, message) => {
    const res = await user.client.request(method, path, { body: body(admin.user.id), query: method === 'GET' ? { id: admin.user.id } : undefined });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(message);
  });

  it('is still a user, and the admin is still unbanned, after all those attempts', async () => {
    const me = await user.client.get('/get-session', { disableCookieCache: true });
    expect(me.body.user.role).toBe('user');
    expect((await signIn(daemon.url, admin.user.email)).user.role).toBe('admin');
  });
});

describe('an admin', () => {
  it('lists users', async () => {
    const res = await admin.client.get('/admin/list-users', { limit: 100 });
    expect(res.status).toBe(200);
    const emails = res.body.users.map((u: { email: string }) => u.email);
    expect(emails).toEqual(expect.arrayContaining([admin.user.email, user.user.email]));
    expect(res.body.total).toBeGreaterThanOrEqual(2);
  });

  it('creates an account that can sign in', async () => {
    const email = uniqueEmail('created');
    const res = await admin.client.post('/admin/create-user', { email, password: TEST_PASSWORD, name: 'Created' });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ email, role: 'user' });
    expect((await signIn(daemon.url, email)).user.email).toBe(email);
  });

  it('refuses to create an account whose email is taken', async () => {
    const res = await admin.client.post('/admin/create-user', { email: user.user.email, password: TEST_PASSWORD, name: 'Dup' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('User already exists. Use another email.');
  });

  it('sets a role, which takes effect at once', async () => {
    const promoted = await signUp(daemon.url);
    expect((await promoted.client.get('/admin/list-users')).status).toBe(403);
    const res = await admin.client.post('/admin/set-role', { userId: promoted.user.id, role: 'admin' });
    expect(res.status).toBe(200);
    expect(res.body.user.role).toBe('admin');
    expect((await promoted.client.get('/admin/list-users', {}, 'bearer')).status).toBe(200);
  });

  it('refuses a role that does not exist', async () => {
    const res = await admin.client.post('/admin/set-role', { userId: user.user.id, role: 'superuser' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('You are not allowed to set a non-existent role value');
  });

  it('bans a user: their sessions end and they cannot sign in again', async () => {
    const banned = await signUp(daemon.url);
    const res = await admin.client.post('/admin/ban-user', { userId: banned.user.id, banReason: 'spam' });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ banned: true, banReason: 'spam' });
    expect((await banned.client.get('/get-session', { disableCookieCache: true })).body).toBeNull();
    const again = await authClient(daemon.url).post('/sign-in/email', { email: banned.user.email, password: TEST_PASSWORD });
    expect(again.status).toBe(403);
    expect(again.body.code).toBe('BANNED_USER');
    // Better Auth's default wording extends SPEC §8's 'You have been banned from this application'.
    expect(again.body.message).toMatch(/^You have been banned from this application/);
  });

  it('unbans a user, who can then sign in', async () => {
    const banned = await signUp(daemon.url);
    await admin.client.post('/admin/ban-user', { userId: banned.user.id });
    expect((await admin.client.post('/admin/unban-user', { userId: banned.user.id })).status).toBe(200);
    expect((await signIn(daemon.url, banned.user.email)).user.id).toBe(banned.user.id);
  });

  it("cannot ban themselves: 'You cannot ban yourself'", async () => {
    const res = await admin.client.post('/admin/ban-user', { userId: admin.user.id });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('You cannot ban yourself');
  });
});
