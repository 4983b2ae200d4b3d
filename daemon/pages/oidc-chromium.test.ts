import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../testing/browser.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { freePort, startTestOidcProvider, type TestOidcAccount, type TestOidcProvider } from '../testing/oidc.js';
import { newUser, signInWithBrowser, signUpOverHttp, submit } from './testing.js';

/**
 * Sign-in and linking through an OpenID Connect provider in real Chromium. The provider is reached as
 * `localhost` and tilld as `127.0.0.1`: two sites, so the way back from the provider is a cross-site
 * navigation, as it is with a real provider.
 */

let idp: TestOidcProvider;
let daemon: TestDaemon;
let browser: Browser;
let contexts: BrowserContext[];

beforeAll(async () => {
  const port = await freePort();
  [idp, browser] = await Promise.all([
    startTestOidcProvider({ host: 'localhost', redirectUris: [`http://127.0.0.1:${port}/api/auth/callback/oidc`] }),
    launchBrowser(),
  ]);
  daemon = await startTestDaemon({
    TILL_PORT: String(port),
    TILL_OIDC_DISCOVERY_URL: idp.discoveryUrl,
    TILL_OIDC_CLIENT_ID: idp.clientId,
    TILL_OIDC_CLIENT_SECRET: idp.clientSecret,
    TILL_OIDC_NAME: 'Test IdP',
  });
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
  await idp?.close();
});
beforeEach(() => {
  contexts = [];
});
afterEach(async () => {
  idp.faults.userinfoStatus = undefined;
  await Promise.all(contexts.map((context) => context.close()));
});

async function newPage(options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
  const context = await browser.newContext(options);
  contexts.push(context);
  return context.newPage();
}

const providerAccount = (label: string, extra: Partial<TestOidcAccount> = {}): TestOidcAccount =>
  idp.addAccount({ login: `${label}-${randomUUID().slice(0, 8)}`, password: 'provider password', email: `${label}-${randomUUID().slice(0, 8)}@idp.example`, name: `IdP ${label}`, ...extra });

/** On the provider's login page: types the account's login and password and sends the form. */
async function logInAtProvider(page: Page, account: TestOidcAccount) {
  expect(new URL(page.url()).origin).toBe(idp.issuer);
  await page.getByLabel('Login').fill(account.login);
  await page.getByLabel('Password').fill(account.password);
  await submit(page, 'Sign in at the provider');
}

const methodRows = (page: Page) => page.getByRole('table', { name: 'How you can sign in' }).locator('tbody tr');

describe('OpenID Connect sign-in in Chromium', () => {
  it('signs in with "Continue with Test IdP", through the provider\'s login form, onto /account showing the linked account', async () => {
    const account = providerAccount('chromium');
    const page = await newPage();
    await page.goto(`${daemon.url}/sign-in`);
    await submit(page, 'Continue with Test IdP');
    await logInAtProvider(page, account);
    expect(page.url()).toBe(`${daemon.url}/account`);
    expect(await page.locator('dl.facts').textContent()).toContain(account.email);
    expect(await methodRows(page).allTextContents()).toEqual([expect.stringMatching(/^Test IdP\d{4}-\d\d-\d\d/)]);
    const cookies = await page.context().cookies(daemon.url);
    expect(cookies.find((cookie) => cookie.name === 'better-auth.session_token')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
  });

  it('works with JavaScript disabled, and goes on to the page named by next', async () => {
    const account = providerAccount('nojs');
    const page = await newPage({ javaScriptEnabled: false });
    await page.goto(`${daemon.url}/sign-in?next=%2Fdevice`);
    await submit(page, 'Continue with Test IdP');
    await logInAtProvider(page, account);
    expect(page.url()).toBe(`${daemon.url}/device`);
  });

  it('shows the provider\'s failure on the sign-in page: "Failed to get user info"', async () => {
    idp.faults.userinfoStatus = 502;
    const page = await newPage();
    await page.goto(`${daemon.url}/sign-in`);
    await submit(page, 'Continue with Test IdP');
    await logInAtProvider(page, providerAccount('failing'));
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(await page.getByRole('alert').textContent()).toContain('Failed to get user info');
    // Still on a working sign-in page.
    expect(await page.getByRole('button', { name: 'Continue with Test IdP' }).count()).toBe(1);
  });
});

describe('signing up through the provider in Chromium', () => {
  it('offers the same "Continue with …" buttons on /sign-up, and the first sign-in through one makes the account', async () => {
    const account = providerAccount('signup');
    const page = await newPage({ javaScriptEnabled: false });
    await page.goto(`${daemon.url}/sign-up?next=%2Fdevice`);
    expect(await page.getByRole('heading', { name: 'Or sign up with' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: /^Continue with / }).allTextContents()).toEqual(['Continue with Test IdP']);
    await submit(page, 'Continue with Test IdP');
    await logInAtProvider(page, account);
    // On to the page `next` named, signed in to a new account made from the provider's claims.
    expect(page.url()).toBe(`${daemon.url}/device`);
    await page.goto(`${daemon.url}/account`);
    expect(await page.locator('dl.facts').textContent()).toContain(account.email);
    expect(await methodRows(page).allTextContents()).toEqual([expect.stringMatching(/^Test IdP/)]);
    const users = (await daemon.db('user').where('email', account.email!.toLowerCase())) as { name: string; emailVerified: unknown }[];
    expect(users).toHaveLength(1);
    expect(users[0]!.name).toBe(account.name);
  });

  it('keeps the buttons when the form comes back with an error', async () => {
    const page = await newPage();
    await page.goto(`${daemon.url}/sign-up`);
    await page.getByLabel('Name', { exact: true }).fill('Someone');
    await page.getByLabel('Email address').fill(`short-${randomUUID().slice(0, 8)}@example.com`);
    await page.getByLabel('Password').fill('short');
    await submit(page, 'Create account');
    expect(await page.locator('.field-error').allTextContents()).toEqual([expect.stringContaining('Password too short')]);
    expect(await page.getByRole('button', { name: 'Continue with Test IdP' }).count()).toBe(1);
  });
});

describe('sign-in methods on /account in Chromium', () => {
  it('links the provider to a password account, unlinks it, and refuses to unlink the last method', async () => {
    const user = newUser('methods');
    await signUpOverHttp(daemon.url, user);
    const account = providerAccount('methods', { email: user.email });
    const page = await newPage();
    await signInWithBrowser(page, daemon.url, user);
    expect(await methodRows(page).count()).toBe(1);

    await submit(page, 'Link Test IdP');
    await logInAtProvider(page, account);
    expect(page.url()).toBe(`${daemon.url}/account?notice=account-linked`);
    expect(await page.getByRole('status').first().textContent()).toContain('The account was linked');
    expect(await methodRows(page).count()).toBe(2);
    expect(await page.getByRole('button', { name: 'Link Test IdP', exact: true }).count()).toBe(0);

    await submit(page, 'Unlink Test IdP');
    expect(await page.getByRole('status').first().textContent()).toContain('The sign-in method was removed');
    expect(await methodRows(page).count()).toBe(1);

    // The last method is not offered for removal; a forged post is still refused by Better Auth.
    expect(await page.getByRole('button', { name: 'Unlink Password' }).count()).toBe(0);
    expect(await methodRows(page).first().textContent()).toContain('Your only sign-in method');
    const forged = await page.request.post(`${daemon.url}/account/accounts/unlink`, {
      form: { account_id: (await daemon.db('account').where({ providerId: 'credential' }).join('user', 'user.id', 'account.userId').where('user.email', user.email).first('account.id')).id },
      headers: { origin: daemon.url },
    });
    expect(await forged.text()).toContain('unlink your last account');
    expect(await methodRows(page).count()).toBe(1);
  });

  it('says "Social account already linked" when the provider account signs in to someone else', async () => {
    const account = providerAccount('owner');
    const ownerPage = await newPage();
    await ownerPage.goto(`${daemon.url}/sign-in`);
    await submit(ownerPage, 'Continue with Test IdP');
    await logInAtProvider(ownerPage, account);

    const other = newUser('other');
    await signUpOverHttp(daemon.url, other);
    idp.addAccount({ ...account, email: other.email });
    const page = await newPage({ javaScriptEnabled: false });
    await signInWithBrowser(page, daemon.url, other);
    await submit(page, 'Link Test IdP');
    await logInAtProvider(page, account);
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await page.getByRole('alert').textContent()).toContain('Social account already linked');
    expect(await methodRows(page).count()).toBe(1);
  });
});
