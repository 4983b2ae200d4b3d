import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../testing/browser.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { newUser, signInWithBrowser, signUpOverHttp, submit, type TestUser } from './testing.js';

let daemon: TestDaemon;
let browser: Browser;
let contexts: BrowserContext[];

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
});
beforeEach(() => {
  contexts = [];
});
afterEach(() => Promise.all(contexts.map((context) => context.close())));

/** A fresh browser (own cookie jar) signed in as `user`, on the account page. */
async function signedInBrowser(user: TestUser): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  await signInWithBrowser(page, daemon.url, user);
  expect(new URL(page.url()).pathname).toBe('/account');
  return page;
}

const sessionRows = (page: Page) => page.locator('tbody tr[data-session-id]');

describe('/account in Chromium', () => {
  it('shows who you are and your sessions, this one marked, with device and address', async () => {
    const user = newUser('profile');
    await signUpOverHttp(daemon.url, user);
    const page = await signedInBrowser(user);
    const profile = await page.locator('dl.facts').textContent();
    expect(profile).toContain(user.name);
    expect(profile).toContain(user.email);
    expect(profile).toMatch(/Role(user|admin)/);
    // One session from the HTTP sign-up, one from this browser.
    expect(await sessionRows(page).count()).toBe(2);
    const current = sessionRows(page).filter({ hasText: 'This session' });
    expect(await current.count()).toBe(1);
    expect(await current.textContent()).toContain('Chrome on Linux');
    expect(await current.textContent()).toContain('127.0.0.1');
  });

  it('revokes another session, which is signed out at once', async () => {
    const user = newUser('revoker');
    await signUpOverHttp(daemon.url, user);
    const laptop = await signedInBrowser(user);
    const phone = await signedInBrowser(user);
    await laptop.reload();
    expect(await sessionRows(laptop).count()).toBe(3);

    const phoneRow = sessionRows(laptop).filter({ hasText: 'Chrome' }).filter({ hasNotText: 'This session' });
    expect(await phoneRow.count()).toBe(1);
    await Promise.all([laptop.waitForNavigation(), phoneRow.getByRole('button', { name: /^Revoke/ }).click()]);
    expect(await laptop.getByRole('status').textContent()).toContain('The session was revoked');
    expect(await sessionRows(laptop).count()).toBe(2);

    await phone.goto(`${daemon.url}/account`);
    expect(new URL(phone.url()).pathname).toBe('/sign-in');
  });

  it('signs out everywhere else, keeping this session', async () => {
    const user = newUser('everywhere');
    await signUpOverHttp(daemon.url, user);
    const laptop = await signedInBrowser(user);
    const phone = await signedInBrowser(user);
    await laptop.reload();
    await submit(laptop, 'Sign out everywhere else');
    expect(await laptop.getByRole('status').textContent()).toBe('All your other sessions were revoked.');
    expect(await sessionRows(laptop).count()).toBe(1);
    expect(await laptop.getByRole('button', { name: 'Sign out everywhere else' }).count()).toBe(0);

    await phone.goto(`${daemon.url}/account`);
    expect(new URL(phone.url()).pathname).toBe('/sign-in');
  });

  it('signs out, after which the account page sends you to sign in', async () => {
    const user = newUser('leaver');
    await signUpOverHttp(daemon.url, user);
    const page = await signedInBrowser(user);
    await Promise.all([page.waitForNavigation(), page.getByRole('navigation', { name: 'Account' }).getByRole('button', { name: 'Sign out' }).click()]);
    expect(page.url()).toBe(`${daemon.url}/sign-in?notice=signed-out`);
    expect(await page.context().cookies()).not.toContainEqual(expect.objectContaining({ name: 'better-auth.session_token' }));
    await page.goto(`${daemon.url}/account`);
    expect(page.url()).toBe(`${daemon.url}/sign-in?next=%2Faccount`);
  });

  it('lists your organizations with your role in each', async () => {
    const user = newUser('member');
    const cookie = await signUpOverHttp(daemon.url, user);
    const created = await fetch(`${daemon.url}/api/auth/organization/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, origin: daemon.url },
      body: JSON.stringify({ name: 'Acme Studio', slug: `acme-${user.email.slice(7, 15)}` }),
    });
    expect(created.status).toBe(200);
    const page = await signedInBrowser(user);
    const row = page.getByRole('table', { name: 'Your organizations' }).getByRole('row', { name: /Acme Studio/ });
    expect(await row.textContent()).toContain('owner');
  });

  it('works with JavaScript disabled', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    contexts.push(context);
    const user = newUser('no-js-account');
    await signUpOverHttp(daemon.url, user);
    const page = await context.newPage();
    await signInWithBrowser(page, daemon.url, user);
    expect(await sessionRows(page).count()).toBe(2);
    await submit(page, 'Sign out everywhere else');
    expect(await sessionRows(page).count()).toBe(1);
  });
});
