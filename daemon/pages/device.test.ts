import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../testing/browser.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { fillSignIn, newUser, pollDeviceToken, postForm, requestDeviceCode, signInWithBrowser, signUpOverHttp, submit, type TestUser } from './testing.js';

let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  // A 1 s polling interval keeps the token polls below from hitting slow_down.
  [daemon, browser] = await Promise.all([startTestDaemon({ TILL_DEVICE_CODE_INTERVAL: '1s' }), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
});
afterEach(() => context.close());

async function signedInPage(user: TestUser, into: BrowserContext = context): Promise<Page> {
  await signUpOverHttp(daemon.url, user);
  const page = await into.newPage();
  await signInWithBrowser(page, daemon.url, user);
  return page;
}

const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

describe('/device in Chromium', () => {
  it('approves a device code end to end: sign-in detour, client name, token for the terminal', async () => {
    const user = newUser('approver');
    await signUpOverHttp(daemon.url, user);
    const code = await requestDeviceCode(daemon.url);
    expect(code.verification_uri).toBe(`${daemon.url}/device`);

    const page = await context.newPage();
    await page.goto(code.verification_uri_complete);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await fillSignIn(page, user);

    expect(page.url()).toBe(code.verification_uri_complete);
    expect(await heading(page)).toBe('Approve this device?');
    const card = page.locator('.card');
    expect(await card.textContent()).toContain('Till CLI (till login)');
    expect(await card.textContent()).toContain(`${code.user_code.slice(0, 4)}-${code.user_code.slice(4)}`);
    expect((await pollDeviceToken(daemon.url, code.device_code)).body.error).toBe('authorization_pending');

    const approved = await submit(page, 'Approve');
    expect(approved?.status()).toBe(200);
    expect(await heading(page)).toBe('Device approved');
    expect(await page.getByRole('status').textContent()).toContain('Return to your terminal');

    await new Promise((resolve) => setTimeout(resolve, 1100));
    const token = await pollDeviceToken(daemon.url, code.device_code);
    expect(token.status).toBe(200);
    expect(token.body.token_type).toBe('Bearer');
    const session = await fetch(`${daemon.url}/api/auth/get-session`, { headers: { authorization: `Bearer ${token.body.access_token}` } });
    expect(((await session.json()) as { user: { email: string } }).user.email).toBe(user.email);
  });

  it('denies a device code, and the terminal is told access_denied', async () => {
    const page = await signedInPage(newUser('denier'));
    const code = await requestDeviceCode(daemon.url);
    await page.goto(code.verification_uri_complete);
    const denied = await submit(page, 'Deny');
    expect(denied?.status()).toBe(200);
    expect(await heading(page)).toBe('Request denied');
    const token = await pollDeviceToken(daemon.url, code.device_code);
    expect(token.status).toBe(400);
    expect(token.body.error).toBe('access_denied');
  });

  it('takes a code typed in lower case with a dash', async () => {
    const page = await signedInPage(newUser('typist'));
    const code = await requestDeviceCode(daemon.url);
    await page.goto(`${daemon.url}/device`);
    expect(await heading(page)).toBe('Connect a device');
    await page.getByLabel('Code shown in your terminal').fill(`${code.user_code.slice(0, 4)}-${code.user_code.slice(4)}`.toLowerCase());
    await submit(page, 'Continue');
    expect(await heading(page)).toBe('Approve this device?');
    await submit(page, 'Approve');
    expect(await heading(page)).toBe('Device approved');
  });

  it('refuses a second user approving someone else\'s claimed code', async () => {
    const owner = await signedInPage(newUser('owner'));
    const code = await requestDeviceCode(daemon.url);
    await owner.goto(code.verification_uri_complete);
    expect(await heading(owner)).toBe('Approve this device?');

    const intruderContext = await browser.newContext();
    try {
      const intruder = await signedInPage(newUser('intruder'), intruderContext);
      const shown = await intruder.goto(code.verification_uri_complete);
      expect(shown?.status()).toBe(403);
      expect(await heading(intruder)).toBe('Not your request');
      expect(await intruder.content()).not.toContain('Till CLI');
      expect(await intruder.getByRole('button', { name: 'Approve' }).count()).toBe(0);

      // Even posting the approval directly, with the intruder's own session, is refused.
      const posted = await intruderContext.request.post(`${daemon.url}/device/approve`, {
        form: { user_code: code.user_code },
        headers: { origin: daemon.url },
      });
      expect(posted.status()).toBe(403);
      expect((await pollDeviceToken(daemon.url, code.device_code)).body.error).toBe('authorization_pending');
    } finally {
      await intruderContext.close();
    }

    await submit(owner, 'Approve');
    expect(await heading(owner)).toBe('Device approved');
  });

  it('works with JavaScript disabled', async () => {
    const noScript = await browser.newContext({ javaScriptEnabled: false });
    try {
      const user = newUser('no-js-device');
      await signUpOverHttp(daemon.url, user);
      const code = await requestDeviceCode(daemon.url);
      const page = await noScript.newPage();
      await page.goto(code.verification_uri_complete);
      await fillSignIn(page, user);
      await submit(page, 'Approve');
      expect(await heading(page)).toBe('Device approved');
    } finally {
      await noScript.close();
    }
  });

  it('refuses a cross-origin approval with 403 even for the code\'s owner', async () => {
    const user = newUser('cross-approve');
    const page = await signedInPage(user);
    const code = await requestDeviceCode(daemon.url);
    await page.goto(code.verification_uri_complete);
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const response = await postForm(daemon.url, '/device/approve', { user_code: code.user_code }, { cookie, origin: 'http://evil.example' });
    expect(response.status).toBe(403);
    expect((await pollDeviceToken(daemon.url, code.device_code)).body.error).toBe('authorization_pending');
  });
});
