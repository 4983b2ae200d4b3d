import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { authClient, bearerClient, signUp } from '../testing/auth-client.js';

let daemon: TestDaemon;

beforeAll(async () => {
  daemon = await startTestDaemon();
  await signUp(daemon.url); // the first account (an admin) exists, so nothing is special about the calls below
});
afterAll(async () => {
  await daemon?.close();
});

// Every endpoint that needs a login, with a body that passes validation (validation comes first).
const SESSION_REQUIRED: [method: 'GET' | 'POST', path: string, body?: object][] = [
  ['GET', '/list-sessions'],
  ['POST', '/revoke-session', { token: 'x' }],
  ['POST', '/revoke-sessions', {}],
  ['POST', '/revoke-other-sessions', {}],
  ['POST', '/update-user', { name: 'x' }],
  ['POST', '/change-password', { currentPassword: 'old password', newPassword: 'new password' }],
  ['POST', '/change-email', { newEmail: 'x@example.test' }],
  ['POST', '/delete-user', {}],
  ['GET', '/admin/list-users'],
  ['POST', '/admin/ban-user', { userId: 'x' }],
  ['POST', '/admin/set-role', { userId: 'x', role: 'admin' }],
  ['POST', '/admin/create-user', { email: 'x@example.test', password: 'long enough', name: 'x' }],
  ['POST', '/admin/has-permission', { permissions: { user: ['list'] } }],
  ['POST', '/organization/create', { name: 'Acme', slug: 'acme' }],
  ['GET', '/organization/list'],
  ['POST', '/organization/create-team', { name: 'Team', organizationId: 'x' }],
  ['POST', '/organization/invite-member', { email: 'x@example.test', role: 'member', organizationId: 'x' }],
  ['POST', '/organization/create-role', { role: 'r', permission: { team: ['create'] }, organizationId: 'x' }],
  ['POST', '/device/approve', { userCode: 'ABCDEFGH' }],
  ['POST', '/device/deny', { userCode: 'ABCDEFGH' }],
];

describe('without a session', () => {
  it.each(SESSION_REQUIRED)('answers 401 to %s %s', async (method, path, body) => {
    const res = await authClient(daemon.url).request(method, path, { body });
    expect(res.status).toBe(401);
  });

  it.each(SESSION_REQUIRED)('answers 401 to %s %s with a forged bearer token', async (method, path, body) => {
    const res = await bearerClient(daemon.url, 'forged-token.forged-signature').request(method, path, { body });
    expect(res.status).toBe(401);
  });

  it('answers get-session with null rather than an error', async () => {
    const res = await authClient(daemon.url).get('/get-session');
    expect(res.status).toBe(200);
    expect(res.body).toBeNull();
  });
});
