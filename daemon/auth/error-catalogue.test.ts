import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { postAuthJson, signedUpAccount, type TestUser } from '../pages/testing.js';

/**
 * SPEC §8 messages that the email, invitation and delete-user flows produce and that no flow's own test
 * reaches: each is provoked over HTTP the way a client or a stale mailed link would. (The others are in
 * username.test.ts, delete-user.test.ts, pages/email.test.ts, pages/oidc.test.ts; docs/auth.md lists the
 * ones Better Auth 1.7 cannot produce.) No SMTP: mail is read from the local outbox.
 */

let daemon: TestDaemon;

beforeAll(async () => {
  daemon = await startTestDaemon();
});
afterAll(async () => {
  await daemon?.close();
});

const api = (path: string, body: unknown, cookie?: string) => postAuthJson(daemon.url, path, body, cookie);
const account = (label: string) => signedUpAccount(daemon.url, label);

/** The newest mail to `to` whose body has a link starting with `prefix`: that link. */
async function mailedLink(to: string, prefix: string): Promise<string> {
  const mails = (await daemon.db('mail_outbox').where('to_address', to).orderBy('created_at', 'desc')) as { body: string }[];
  for (const mail of mails) {
    const link = mail.body.split(/\s+/).find((word) => word.startsWith(prefix));
    if (link) return link;
  }
  throw new Error(`no mail to ${to} with a link to ${prefix}`);
}

const deleteAccount = async ({ user, cookie, id }: { user: TestUser; cookie: string; id: string }) => {
  expect(await api('/delete-user', { password: user.password }, cookie)).toMatchObject({ status: 200 });
  expect(await daemon.db('user').where('id', id)).toHaveLength(0);
};

describe('SPEC §8 messages of the email flows', () => {
  it('answers 400 EMAIL_CAN_NOT_BE_UPDATED "Email can not be updated" when update-user names an email (change-email is the way)', async () => {
    const { user, cookie, id } = await account('noupdate');
    const refused = await api('/update-user', { email: `other-${user.email}`, name: 'Renamed' }, cookie);
    expect(refused).toEqual({ status: 400, body: { code: 'EMAIL_CAN_NOT_BE_UPDATED', message: 'Email can not be updated' } });
    expect(await daemon.db('user').where('id', id).first()).toMatchObject({ email: user.email, name: user.name });
  });

  it('answers 400 USER_NOT_FOUND "User not found" to a password-reset link whose account was deleted meanwhile', async () => {
    const owner = await account('resetgone');
    expect(await api('/request-password-reset', { email: owner.user.email, redirectTo: '/reset-password' })).toEqual({ status: 200, body: expect.objectContaining({ status: true }) });
    const token = new URL(await mailedLink(owner.user.email, `${daemon.url}/reset-password?token=`)).searchParams.get('token')!;
    expect(token).toBeTruthy();
    await deleteAccount(owner);
    const refused = await api('/reset-password', { token, newPassword: 'a brand new passphrase' });
    expect(refused).toEqual({ status: 400, body: { code: 'USER_NOT_FOUND', message: 'User not found' } });
  });

  it('answers USER_NOT_FOUND "User not found" to a verification link whose account was deleted: 401 over the API, the reason on /email-verified', async () => {
    const owner = await account('verifygone');
    const link = await mailedLink(owner.user.email, `${daemon.url}/api/auth/verify-email?token=`);
    await deleteAccount(owner);

    const api401 = await fetch(link.replace(/&callbackURL=[^&]*/, ''), { redirect: 'manual' });
    expect(api401.status).toBe(401);
    expect(await api401.json()).toEqual({ code: 'USER_NOT_FOUND', message: 'User not found' });

    const page = await fetch(link, { redirect: 'manual' });
    expect(page.status).toBe(302);
    const landing = new URL(page.headers.get('location')!, daemon.url);
    expect(landing.pathname).toBe('/email-verified');
    expect(landing.searchParams.get('error')).toBe('USER_NOT_FOUND');
    expect(await (await fetch(landing)).text()).toContain('The account this link was for no longer exists.');
  });
});

describe('SPEC §8 messages of invitations and account deletion', () => {
  it('answers 400 INVALID_EMAIL "Invalid email" to an invitation for something that is not an address, and records none', async () => {
    const owner = await account('inviter');
    const organization = await api('/organization/create', { name: 'Invite Org', slug: `invite-${Date.now()}` }, owner.cookie);
    expect(organization.status).toBe(200);
    const refused = await api('/organization/invite-member', { email: 'not-an-address', role: 'member', organizationId: organization.body.id }, owner.cookie);
    expect(refused).toEqual({ status: 400, body: { code: 'INVALID_EMAIL', message: 'Invalid email' } });
    expect(await daemon.db('invitation').where('organizationId', organization.body.id)).toHaveLength(0);
  });

  it('answers 400 INVALID_EMAIL "Invalid email" to an email sign-in with something that is not an address', async () => {
    const refused = await api('/sign-in/email', { email: 'not-an-address', password: 'whatever password' });
    expect(refused).toEqual({ status: 400, body: { code: 'INVALID_EMAIL', message: 'Invalid email' } });
  });

  it('validates the address first where the body asks for one, so those flows answer VALIDATION_ERROR, never INVALID_EMAIL', async () => {
    const { cookie } = await account('validated');
    const calls: [string, Record<string, unknown>, string | undefined, string][] = [
      ['/sign-up/email', { name: 'Someone', email: 'not-an-address', password: 'correct horse battery staple' }, undefined, 'body.email'],
      ['/request-password-reset', { email: 'not-an-address', redirectTo: '/reset-password' }, undefined, 'body.email'],
      ['/send-verification-email', { email: 'not-an-address', callbackURL: '/email-verified' }, undefined, 'body.email'],
      ['/change-email', { newEmail: 'not-an-address', callbackURL: '/account' }, cookie, 'body.newEmail'],
    ];
    for (const [path, body, withCookie, field] of calls) {
      const refused = await api(path, body, withCookie);
      expect(refused.status, path).toBe(400);
      expect(refused.body.code, path).toBe('VALIDATION_ERROR');
      expect(refused.body.message, path).toContain(`[${field}] Invalid email address`);
    }
  });

  it('answers a deletion link opened without a session with 404 "Failed to get user info", and keeps the account', async () => {
    const owner = await account('linkelsewhere');
    expect(await api('/delete-user', { callbackURL: '/' }, owner.cookie)).toEqual({ status: 200, body: { success: true, message: 'Verification email sent' } });
    const link = await mailedLink(owner.user.email, `${daemon.url}/api/auth/delete-user/callback?token=`);
    const elsewhere = await fetch(link, { redirect: 'manual' });
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toEqual({ code: 'FAILED_TO_GET_USER_INFO', message: 'Failed to get user info' });
    expect(await daemon.db('user').where('id', owner.id)).toHaveLength(1);
  });
});
