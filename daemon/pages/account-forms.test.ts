import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../testing/browser.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { newUser, signInWithBrowser, signUpOverHttp, submit, type TestUser } from './testing.js';

/** The change-of-email and delete-account forms of /account, in Chromium, mail kept in the local outbox. */

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

async function signedInPage(user: TestUser, options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
  const context = await browser.newContext(options);
  contexts.push(context);
  const page = await context.newPage();
  await signInWithBrowser(page, daemon.url, user);
  expect(new URL(page.url()).pathname).toBe('/account');
  return page;
}

/** The link in the newest outbox mail to `to` that starts with `prefix`. */
async function mailedLink(to: string, prefix: string): Promise<string> {
  const mails = (await daemon.db('mail_outbox').where('to_address', to).orderBy('created_at', 'desc')) as { body: string }[];
  for (const mail of mails) {
    const link = mail.body.match(/https?:\/\/\S+/g)?.find((url) => url.startsWith(`${daemon.url}${prefix}`));
    if (link) return link;
  }
  throw new Error(`no mail to ${to} with a link to ${prefix}`);
}

const userRow = async (email: string) => (await daemon.db('user').where('email', email).first()) as { id: string; email: string } | undefined;

describe('changing the email address on /account', () => {
  it('sends a link to the new address; following it changes the address shown and the one to sign in with', async () => {
    const user = newUser('mover');
    await signUpOverHttp(daemon.url, user);
    const page = await signedInPage(user);
    const newEmail = newUser('moved').email;
    await page.getByLabel('New email address').fill(newEmail);
    await submit(page, 'Change email address');
    expect(page.url()).toBe(`${daemon.url}/account?notice=email-change-sent`);
    expect(await page.getByRole('status').first().textContent()).toContain('a link to confirm the change is on its way');
    // Nothing has changed yet.
    expect(await page.locator('dl.facts').textContent()).toContain(user.email);

    await page.goto(await mailedLink(newEmail, '/api/auth/verify-email?token='));
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await page.locator('dl.facts').textContent()).toContain(newEmail);
    expect(await userRow(user.email)).toBeUndefined();
    expect(await userRow(newEmail)).toBeDefined();
  });

  it('keeps an address the browser lets through but the server does not, or an unchanged one, on the form with the reason, without JavaScript', async () => {
    const user = newUser('typo');
    await signUpOverHttp(daemon.url, user);
    const page = await signedInPage(user, { javaScriptEnabled: false });
    await page.getByLabel('New email address').fill('me@example');
    const invalid = await submit(page, 'Change email address');
    expect(invalid?.status()).toBe(400);
    const field = page.getByLabel('New email address');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#field-newEmail-error').textContent()).toContain('Enter an email address, like you@example.com.');
    expect(await field.inputValue()).toBe('me@example');

    await field.fill(user.email.toUpperCase());
    const same = await submit(page, 'Change email address');
    expect(same?.status()).toBe(400);
    expect(await page.locator('#field-newEmail-error').textContent()).toContain('Email is the same');
  });
});

describe('deleting the account on /account', () => {
  it('refuses a wrong password on the field, then deletes with the right one and signs out', async () => {
    const user = newUser('leaver');
    await signUpOverHttp(daemon.url, user);
    const page = await signedInPage(user);
    const { id } = (await userRow(user.email))!;

    await page.getByLabel('Your password').fill('not my password');
    const refused = await submit(page, 'Delete my account');
    expect(refused?.status()).toBe(400);
    expect(await page.locator('#field-password-error').textContent()).toContain('Invalid password');
    expect(await userRow(user.email)).toBeDefined();

    await page.getByLabel('Your password').fill(user.password);
    await submit(page, 'Delete my account');
    expect(page.url()).toBe(`${daemon.url}/sign-in?notice=account-deleted`);
    expect(await page.getByRole('status').textContent()).toBe('Your account was deleted.');
    expect(await userRow(user.email)).toBeUndefined();
    expect(await daemon.db('session').where('userId', id)).toHaveLength(0);
    await page.goto(`${daemon.url}/account`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
  });

  it('refuses to leave an organization without an owner, saying which one', async () => {
    const user = newUser('owner');
    const cookie = await signUpOverHttp(daemon.url, user);
    const created = await fetch(`${daemon.url}/api/auth/organization/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: daemon.url, cookie },
      body: JSON.stringify({ name: 'Lonely Owner Ltd', slug: `lonely-${Date.now()}` }),
    });
    expect(created.status).toBe(200);
    const page = await signedInPage(user, { javaScriptEnabled: false });
    await page.getByLabel('Your password').fill(user.password);
    const refused = await submit(page, 'Delete my account');
    expect(refused?.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('You are the only owner of the organization "Lonely Owner Ltd"');
    expect(await userRow(user.email)).toBeDefined();
  });
});

describe('creating an organization on /account', () => {
  it('creates one with the slug made from the name, without JavaScript, and lists it with the owner role', async () => {
    const user = newUser('founder');
    await signUpOverHttp(daemon.url, user);
    const page = await signedInPage(user, { javaScriptEnabled: false });
    expect(await page.getByText('You are not a member of any organization yet').count()).toBe(1);
    const name = `Founder Goods ${Date.now()}`;
    await page.getByLabel('Name', { exact: true }).fill(name);
    await submit(page, 'Create organization');
    expect(page.url()).toBe(`${daemon.url}/account?notice=organization-created`);
    const row = page.getByRole('table', { name: 'Your organizations' }).locator('tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain(name);
    expect(await row.locator('code').textContent()).toBe(name.toLowerCase().replace(/ /g, '-'));
    expect(await row.textContent()).toContain('owner');
  });

  it('shows what is wrong beside the field, keeps what was typed, and takes an edited slug', async () => {
    const user = newUser('slugger');
    await signUpOverHttp(daemon.url, user);
    const page = await signedInPage(user, { javaScriptEnabled: false });
    await page.getByLabel('Name', { exact: true }).fill('Slash Co');
    await page.getByLabel('Slug (optional)').fill('slash/co');
    const refused = await submit(page, 'Create organization');
    expect(refused?.status()).toBe(400);
    const slug = page.getByLabel('Slug (optional)');
    expect(await slug.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#field-slug-error').textContent()).toContain('Use lowercase letters, digits and hyphens only');
    expect(await slug.inputValue()).toBe('slash/co');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Slash Co');

    const chosen = `slash-co-${Date.now()}`;
    await slug.fill(chosen);
    await submit(page, 'Create organization');
    expect(page.url()).toBe(`${daemon.url}/account?notice=organization-created`);
    expect(await page.getByRole('table', { name: 'Your organizations' }).locator('code').textContent()).toBe(chosen);

    // The same slug again is taken: said beside the slug field.
    await page.getByLabel('Name', { exact: true }).fill('Slash Again');
    await page.getByLabel('Slug (optional)').fill(chosen);
    const taken = await submit(page, 'Create organization');
    expect(taken?.status()).toBe(400);
    expect(await page.locator('#field-slug-error').textContent()).toContain('An organization with this slug already exists');
    expect(await page.locator('#field-name-error').count()).toBe(0);
  });
});
