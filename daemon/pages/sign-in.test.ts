import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../testing/browser.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { fillSignIn, newUser, signInWithBrowser, signUpOverHttp, submit } from './testing.js';

let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
});
afterEach(() => context.close());

describe('sign-up and sign-in pages in Chromium', () => {
  it('signs up with the form and lands on the account page', async () => {
    const page = await context.newPage();
    const user = newUser('browser-signup');
    await page.goto(`${daemon.url}/sign-up`);
    expect(await page.title()).toBe('Create your account · Till');
    await page.getByLabel('Name', { exact: true }).fill(user.name);
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    const response = await submit(page, 'Create account');
    expect(response?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your account');
    expect(await page.locator('dl.facts').textContent()).toContain(user.email);
  });

  it('styles the page with the daemon\'s own stylesheet and breaks no CSP rule', async () => {
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(`${daemon.url}/sign-in`);
    const button = page.getByRole('button', { name: 'Sign in' });
    // The stylesheet paints the button; an unstyled one would be transparent.
    expect(await button.evaluate((element) => getComputedStyle(element).backgroundColor)).not.toBe('rgba(0, 0, 0, 0)');
    expect(violations).toEqual([]);
  });

  it('signs in, after a wrong password that shows Better Auth\'s message and keeps the email', async () => {
    const user = newUser('browser-signin');
    await signUpOverHttp(daemon.url, user);
    const page = await context.newPage();
    await page.goto(`${daemon.url}/sign-in`);
    const refused = await fillSignIn(page, { email: user.email, password: 'wrong password' });
    expect(refused?.status()).toBe(401);
    expect(await page.getByRole('alert').textContent()).toBe('Invalid email or password');
    expect(await page.getByLabel('Email address').inputValue()).toBe(user.email);
    expect(await page.getByLabel('Password').inputValue()).toBe('');

    await page.getByLabel('Password').fill(user.password);
    const accepted = await submit(page, 'Sign in');
    expect(accepted?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/account');
  });

  it('signs up with a username, then signs in with it in the one field', async () => {
    const page = await context.newPage();
    const user = newUser('browser-username');
    const username = `Browser_${Date.now().toString(36)}`;
    await page.goto(`${daemon.url}/sign-up`);
    await page.getByLabel('Name', { exact: true }).fill(user.name);
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Username (optional)').fill(username);
    await page.getByLabel('Password').fill(user.password);
    expect((await submit(page, 'Create account'))?.status()).toBe(200);
    await page.getByRole('navigation', { name: 'Account' }).getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/sign-in?notice=signed-out');

    await page.getByLabel('Email address or username').fill(username.toLowerCase());
    await page.getByLabel('Password').fill('wrong password');
    expect((await submit(page, 'Sign in'))?.status()).toBe(401);
    expect(await page.getByRole('alert').textContent()).toBe('Invalid username or password');

    await page.getByLabel('Password').fill(user.password);
    expect((await submit(page, 'Sign in'))?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await page.locator('dl.facts').textContent()).toContain(user.email);
  });

  it('ties a field error to its input', async () => {
    const page = await context.newPage();
    await page.goto(`${daemon.url}/sign-up`);
    const user = newUser('short');
    await page.getByLabel('Name', { exact: true }).fill(user.name);
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill('short');
    expect((await submit(page, 'Create account'))?.status()).toBe(400);
    const password = page.getByLabel('Password');
    expect(await password.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await password.getAttribute('aria-describedby'))!.split(' ');
    const descriptions = await Promise.all(describedBy.map((id) => page.locator(`#${id}`).textContent()));
    expect(descriptions.join(' ')).toContain('Password too short');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe(user.name);
  });

  it('refuses an open-redirect next and lands on the account page', async () => {
    const user = newUser('open-redirect');
    await signUpOverHttp(daemon.url, user);
    const page = await context.newPage();
    await page.goto(`${daemon.url}/sign-in?next=${encodeURIComponent('//evil.example/steal')}`);
    await fillSignIn(page, user);
    expect(page.url()).toBe(`${daemon.url}/account`);
  });

  it('works with JavaScript disabled: sign up, sign out, sign in', async () => {
    const noScript = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await noScript.newPage();
      const user = newUser('no-js');
      await page.goto(`${daemon.url}/sign-up`);
      await page.getByLabel('Name', { exact: true }).fill(user.name);
      await page.getByLabel('Email address').fill(user.email);
      await page.getByLabel('Password').fill(user.password);
      await submit(page, 'Create account');
      expect(new URL(page.url()).pathname).toBe('/account');

      await page.getByRole('navigation', { name: 'Account' }).getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL('**/sign-in?notice=signed-out');
      expect(await page.getByRole('status').textContent()).toBe('You have signed out.');

      await fillSignIn(page, user);
      expect(new URL(page.url()).pathname).toBe('/account');
    } finally {
      await noScript.close();
    }
  });
});

describe('cross-origin forms in Chromium', () => {
  let evil: Server;
  let evilUrl: string;

  beforeAll(async () => {
    // Another origin on the same host: SameSite=Lax cookies still travel, only the Origin check stops the post.
    evil = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<!DOCTYPE html><form method="post" action="${daemon.url}/sign-out"><button>Win a prize</button></form>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => evil.close(() => resolve())));

  it('refuses a form posted from another origin with 403, leaving the user signed in', async () => {
    const user = newUser('csrf');
    await signUpOverHttp(daemon.url, user);
    const page = await context.newPage();
    await signInWithBrowser(page, daemon.url, user);
    expect(new URL(page.url()).pathname).toBe('/account');

    await page.goto(evilUrl);
    const response = await submit(page, 'Win a prize');
    expect(response?.status()).toBe(403);
    expect(await page.getByRole('alert').textContent()).toContain('sent from another site');

    const account = await page.goto(`${daemon.url}/account`);
    expect(account?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/account');
  });
});
