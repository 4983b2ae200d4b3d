import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkIn, startTestSmtpServer, type TestSmtpServer } from '../core/mail/testing.js';
import { startTestDaemon, type TestDaemon } from './testing/daemon.js';
import { postAuthJson, signedUpAccount } from './pages/testing.js';

let smtp: TestSmtpServer;
let daemon: TestDaemon;

beforeAll(async () => {
  smtp = await startTestSmtpServer();
  daemon = await startTestDaemon({ TILL_SMTP_URL: smtp.url });
});
afterAll(async () => {
  await daemon?.close();
  await smtp?.close();
});

const api = (path: string, body: unknown, cookie?: string) => postAuthJson(daemon.url, path, body, cookie);
const account = (label: string) => signedUpAccount(daemon.url, label);

const count = async (table: string, column: string, value: string) => Number(((await daemon.db(table).where(column, value).count({ n: '*' })) as { n: unknown }[])[0]!.n);

describe('deleting an account (POST /api/auth/delete-user)', () => {
  it('refuses without the password: "User already has a password. Provide that to delete the account."', async () => {
    const { cookie, id } = await account('nopass');
    const refused = await api('/delete-user', {}, cookie);
    expect(refused).toEqual({ status: 400, body: { code: 'USER_ALREADY_HAS_PASSWORD', message: 'User already has a password. Provide that to delete the account.' } });
    expect(await count('user', 'id', id)).toBe(1);
  });

  it('refuses a wrong password and keeps the account', async () => {
    const { cookie, id } = await account('wrongpass');
    const refused = await api('/delete-user', { password: 'not the password' }, cookie);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'INVALID_PASSWORD', message: 'Invalid password' });
    expect(await count('user', 'id', id)).toBe(1);
  });

  it('deletes at once with the password, taking its sessions and memberships with it', async () => {
    const owner = await account('keeper');
    const member = await account('leaver');
    const organization = await api('/organization/create', { name: 'Kept Org', slug: `kept-${Date.now()}` }, owner.cookie);
    await daemon.db('member').insert({ id: `m-${member.id}`, organizationId: organization.body.id, userId: member.id, role: 'member', createdAt: new Date().toISOString() });
    expect(await count('member', 'userId', member.id)).toBe(1);

    const deleted = await api('/delete-user', { password: member.user.password }, member.cookie);
    expect(deleted).toEqual({ status: 200, body: { success: true, message: 'User deleted' } });
    expect(await count('user', 'id', member.id)).toBe(0);
    expect(await count('session', 'userId', member.id)).toBe(0);
    expect(await count('member', 'userId', member.id)).toBe(0);
    expect(await count('account', 'userId', member.id)).toBe(0);
    const signIn = await api('/sign-in/email', { email: member.user.email, password: member.user.password });
    expect(signIn.status).toBe(401);
    // The organization keeps its owner.
    expect(await count('member', 'organizationId', organization.body.id)).toBe(1);
  });

  it('refuses to leave an organization ownerless, with the password or by email, until another owner exists', async () => {
    const owner = await account('soleowner');
    const organization = await api('/organization/create', { name: 'Sole Org', slug: `sole-${Date.now()}` }, owner.cookie);
    const refused = await api('/delete-user', { password: owner.user.password }, owner.cookie);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER');
    expect(refused.body.message).toContain('only owner of the organization "Sole Org"');
    expect((await api('/delete-user', { callbackURL: '/' }, owner.cookie)).status).toBe(400);
    expect(await count('user', 'id', owner.id)).toBe(1);

    const second = await account('secondowner');
    await daemon.db('member').insert({ id: `m-${second.id}`, organizationId: organization.body.id, userId: second.id, role: 'owner', createdAt: new Date().toISOString() });
    const deleted = await api('/delete-user', { password: owner.user.password }, owner.cookie);
    expect(deleted.status).toBe(200);
    expect(await count('member', 'organizationId', organization.body.id)).toBe(1);
  });

  it('confirms by email: the mailed link deletes the account once followed from the signed-in browser', async () => {
    const { user, cookie, id } = await account('bymail');
    const asked = await api('/delete-user', { callbackURL: '/' }, cookie);
    expect(asked).toEqual({ status: 200, body: { success: true, message: 'Verification email sent' } });
    expect(await count('user', 'id', id)).toBe(1);
    const mail = await smtp.waitForMail(user.email, /Confirm deleting your Till account/);
    const link = linkIn(mail, `${daemon.url}/api/auth/delete-user/callback?token=`);
    const forged = await fetch(link.replace(/token=[a-z0-9]+/, 'token=abc'), { headers: { cookie }, redirect: 'manual' });
    expect(forged.status).toBe(404);
    expect(await count('user', 'id', id)).toBe(1);
    const followed = await fetch(link, { headers: { cookie }, redirect: 'manual' });
    expect(followed.status).toBe(302);
    expect(followed.headers.get('location')).toBe('/sign-in?notice=account-deleted');
    expect(await count('user', 'id', id)).toBe(0);
    expect(await count('session', 'userId', id)).toBe(0);
  });

  it('answers 401 without a session', async () => {
    expect((await api('/delete-user', { password: 'whatever password' })).status).toBe(401);
  });
});
