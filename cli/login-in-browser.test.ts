import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../daemon/testing/browser.js';
import { startTestDaemon, type TestDaemon } from '../daemon/testing/daemon.js';
import { fillSignIn, newUser, signUpOverHttp, submit } from '../daemon/pages/testing.js';
import { firstLine, tempConfigDir, till } from './testing/till.js';

// The "done means", end to end: `till login --no-browser` in one process, the /device page in a
// real Chromium approves (or denies) it, then `till whoami` answers with the user.

let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  [daemon, browser] = await Promise.all([
    startTestDaemon({ TILL_DEVICE_CODE_INTERVAL: '1s', TILL_DEVICE_CODE_EXPIRES_IN: '20s' }),
    launchBrowser(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
});
afterEach(() => context.close());

/** Starts `till login` and opens the URL it hands on in the browser, signing in on the way. */
async function startLogin(configDir: string) {
  const user = newUser('terminal');
  await signUpOverHttp(daemon.url, user);
  const login = till(['login', '--no-browser', '--server', daemon.url], { TILL_CONFIG_DIR: configDir });
  const prompt = JSON.parse(await firstLine(login)) as { verification_uri_complete: string; user_code: string; expires_in: number };
  expect(prompt.expires_in).toBe(20);
  const page: Page = await context.newPage();
  await page.goto(prompt.verification_uri_complete);
  await fillSignIn(page, user);
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Approve this device?');
  return { login, page, user };
}

describe('till login with the /device page in Chromium', () => {
  it('signs the terminal in once the browser approves, and whoami answers with the user', async () => {
    const configDir = tempConfigDir();
    const { login, page, user } = await startLogin(configDir);
    await submit(page, 'Approve');
    const result = await login;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(user.email);

    const whoami = await till(['whoami', '--json'], { TILL_CONFIG_DIR: configDir });
    expect(whoami.exitCode).toBe(0);
    expect(JSON.parse(whoami.stdout)).toMatchObject({ user: { email: user.email, name: user.name } });
  });

  it('ends with exit code 3 and says so when the browser denies the code', async () => {
    const configDir = tempConfigDir();
    const { login, page } = await startLogin(configDir);
    await submit(page, 'Deny');
    const result = await login;
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(/denied/i);
    expect((await till(['whoami'], { TILL_CONFIG_DIR: configDir })).exitCode).toBe(3);
  });
});
