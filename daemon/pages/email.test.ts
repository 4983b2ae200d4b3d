import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { linkIn, startTestSmtpServer, type TestSmtpServer } from '../../core/mail/testing.js';
import { launchBrowser } from '../testing/browser.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { cookiesOf, fillSignIn, newUser, submit, type TestUser } from './testing.js';

let smtp: TestSmtpServer;
let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  smtp = await startTestSmtpServer();
  [daemon, browser] = await Promise.all([
    startTestDaemon({ TILL_SMTP_URL: smtp.url, TILL_MAIL_FROM: 'Till Billing <billing@till.test>', TILL_REQUIRE_EMAIL_VERIFICATION: '1' }),
    launchBrowser(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
  await smtp?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
});
afterEach(() => context.close());

async function api(path: string, body: unknown, cookie?: string) {
  const response = await fetch(`${daemon.url}/api/auth${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: daemon.url, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json().catch(() => null)) as Record<string, any>, cookie: cookiesOf(response) };
}

async function signIn(user: Pick<TestUser, 'email' | 'password'>) {
  return api('/sign-in/email', { email: user.email, password: user.password });
}

/** Signs up over HTTP and follows the mailed verification link; returns a session cookie. */
async function verifiedUser(label: string): Promise<{ user: TestUser; cookie: string }> {
  const user = newUser(label);
  expect((await api('/sign-up/email', user)).status).toBe(200);
  const mail = await smtp.waitForMail(user.email, /Verify your email/);
  const followed = await fetch(linkIn(mail, `${daemon.url}/api/auth/verify-email`), { redirect: 'manual' });
  expect(followed.status).toBe(302);
  const signedIn = await signIn(user);
  expect(signedIn.status).toBe(200);
  return { user, cookie: signedIn.cookie };
}

describe('mail through a real SMTP server', () => {
  it('refuses sign-in with "Email not verified" until the mailed link is followed, which verifies and signs in', async () => {
    const user = newUser('verify');
    const page = await context.newPage();
    await page.goto(`${daemon.url}/sign-up`);
    await page.getByLabel('Name', { exact: true }).fill(user.name);
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await submit(page, 'Create account');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Check your email');

    const refused = await signIn(user);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'EMAIL_NOT_VERIFIED', message: 'Email not verified' });
    await page.goto(`${daemon.url}/sign-in`);
    await fillSignIn(page, user);
    expect(await page.getByRole('alert').textContent()).toContain('Email not verified');

    const mail = await smtp.waitForMail(user.email, /Verify your email address for Till/);
    expect(mail.from).toBe('billing@till.test');
    expect(mail.source).toContain('From: Till Billing <billing@till.test>');
    await page.goto(linkIn(mail, `${daemon.url}/api/auth/verify-email`));
    expect(new URL(page.url()).pathname).toBe('/email-verified');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Email verified');
    expect(await page.getByRole('status').textContent()).toContain(`${user.email} is verified`);
    expect((await signIn(user)).status).toBe(200);
  });

  it('says so when a verification link is tampered with', async () => {
    const page = await context.newPage();
    await page.goto(`${daemon.url}/api/auth/verify-email?token=not-a-token&callbackURL=/email-verified`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Email not verified');
    expect(await page.getByRole('alert').textContent()).toContain('invalid');
  });

  it('resets a forgotten password through the mailed link, once, and signs out the old sessions', async () => {
    const { user, cookie: oldSession } = await verifiedUser('reset');
    const page = await context.newPage();
    await page.goto(`${daemon.url}/sign-in`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Email address').fill(user.email);
    await submit(page, 'Send the link');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Check your email');

    const mail = await smtp.waitForMail(user.email, /Reset your Till password/);
    const link = linkIn(mail, `${daemon.url}/reset-password?token=`);
    await page.goto(link);
    await page.getByLabel('New password').fill('short');
    await submit(page, 'Set the new password');
    expect(await page.locator('.field-error').textContent()).toContain('Password too short');
    await page.getByLabel('New password').fill('a brand new passphrase');
    await submit(page, 'Set the new password');
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(await page.getByRole('status').textContent()).toContain('Your password was changed');
    await fillSignIn(page, { email: user.email, password: 'a brand new passphrase' });
    expect(new URL(page.url()).pathname).toBe('/account');

    expect((await signIn(user)).status).toBe(401);
    const session = await fetch(`${daemon.url}/api/auth/get-session?disableCookieCache=true`, { headers: { cookie: oldSession } });
    expect(await session.json()).toBeNull();

    await page.goto(link);
    await page.getByLabel('New password').fill('yet another passphrase');
    await submit(page, 'Set the new password');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Reset link not valid');
    expect(await page.getByRole('alert').textContent()).toContain('Invalid token');
  });

  it('asks for a reset without telling whether the address has an account', async () => {
    const page = await context.newPage();
    await page.goto(`${daemon.url}/forgot-password`);
    await page.getByLabel('Email address').fill('nobody-here@example.com');
    const response = await submit(page, 'Send the link');
    expect(response?.status()).toBe(200);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Check your email');
  });

  it('mails an invitation whose link lets the invitee sign in and accept it', async () => {
    const owner = await verifiedUser('owner');
    const organization = await api('/organization/create', { name: 'Mailed Org', slug: `mailed-${Date.now()}` }, owner.cookie);
    expect(organization.status).toBe(200);
    const invitee = await verifiedUser('invitee');
    const invited = await api('/organization/invite-member', { email: invitee.user.email, role: 'member', organizationId: organization.body.id }, owner.cookie);
    expect(invited.status).toBe(200);

    const mail = await smtp.waitForMail(invitee.user.email, /invited you to Mailed Org on Till/);
    const link = linkIn(mail, `${daemon.url}/invitations/`);
    expect(link).toBe(`${daemon.url}/invitations/${invited.body.id}`);
    const page = await context.newPage();
    await page.goto(link);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await fillSignIn(page, invitee.user);
    expect(new URL(page.url()).pathname).toBe(`/invitations/${invited.body.id}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Join Mailed Org');
    expect(await page.locator('.card').textContent()).toContain(`${owner.user.email} invited ${invitee.user.email}`);
    await submit(page, 'Accept invitation');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Invitation accepted');

    const list = await fetch(`${daemon.url}/api/auth/organization/list`, { headers: { cookie: invitee.cookie } });
    expect(((await list.json()) as { id: string }[]).map((o) => o.id)).toContain(organization.body.id);

    // The link works once: the invitation is no longer pending.
    await page.goto(link);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Invitation not available');
  });

  it('changes the email address only after the old address approves and the new one is verified', async () => {
    const { user, cookie } = await verifiedUser('change');
    const newEmail = newUser('changed').email;
    const asked = await api('/change-email', { newEmail, callbackURL: '/email-verified' }, cookie);
    expect(asked.status).toBe(200);
    const approval = await smtp.waitForMail(user.email, /Confirm the change of your Till email address/);
    expect(approval.source).toContain(newEmail);
    const approved = await fetch(linkIn(approval, `${daemon.url}/api/auth/verify-email`), { redirect: 'manual', headers: { cookie } });
    expect(approved.status).toBe(302);
    const verification = await smtp.waitForMail(newEmail, /Verify your email address/);
    const verified = await fetch(linkIn(verification, `${daemon.url}/api/auth/verify-email`), { redirect: 'manual', headers: { cookie } });
    expect(verified.status).toBe(302);
    expect(verified.headers.get('location')).not.toContain('error');
    expect((await signIn({ email: newEmail, password: user.password })).status).toBe(200);
    expect((await signIn(user)).status).toBe(401);
  });

  it('keeps mail links out of the log when SMTP is configured', () => {
    expect(JSON.stringify(daemon.logs)).not.toContain('/reset-password?token=');
    expect(JSON.stringify(daemon.logs)).not.toContain('verify-email?token=');
  });
});
