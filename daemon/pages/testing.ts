import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';

/** Helpers shared by the page tests: accounts, cookies, device codes over plain HTTP, sign-in in a browser. */

// A type, not an interface, so it can be posted as a form (Record<string, string>).
export type TestUser = {
  name: string;
  email: string;
  password: string;
};

export const newUser = (label = 'user'): TestUser => ({
  name: `Test ${label}`,
  email: `${label}-${randomUUID().slice(0, 8)}@example.com`,
  password: 'correct horse battery staple',
});

/** `name=value; …` from a response's Set-Cookie headers, for the next request's Cookie header. */
export function cookiesOf(response: Response): string {
  return response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
}

/** Creates an account through Better Auth's JSON API and returns its session cookie. */
export async function signUpOverHttp(url: string, user: TestUser): Promise<string> {
  const response = await fetch(`${url}/api/auth/sign-up/email`, {
    method: 'POST',
    // fetch sends Sec-Fetch-Mode, so Better Auth's CSRF check wants an Origin, as from a browser.
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify(user),
  });
  if (response.status !== 200) throw new Error(`sign-up failed: ${response.status} ${await response.text()}`);
  return cookiesOf(response);
}

/** Posts a page form the way a browser would (same origin), without following the redirect. */
/** POSTs JSON to one of Better Auth's endpoints (`path` under /api/auth), as a browser would, with a session cookie if given. */
export async function postAuthJson(url: string, path: string, body: unknown, cookie?: string): Promise<{ status: number; body: Record<string, any> }> {
  const response = await fetch(`${url}/api/auth${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json().catch(() => null)) as Record<string, any> };
}

/** A new account signed up over HTTP: the user, its session cookie and its id. */
export async function signedUpAccount(url: string, label: string): Promise<{ user: TestUser; cookie: string; id: string }> {
  const user = newUser(label);
  const cookie = await signUpOverHttp(url, user);
  const session = await fetch(`${url}/api/auth/get-session`, { headers: { cookie } });
  return { user, cookie, id: ((await session.json()) as { user: { id: string } }).user.id };
}

export async function postForm(
  url: string,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url, ...headers },
    body: new URLSearchParams(fields),
    redirect: 'manual',
  });
}

export interface DeviceCode {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
}

/** What `till login` does first: ask for a device code. */
export async function requestDeviceCode(url: string, clientId = 'till-cli'): Promise<DeviceCode> {
  const response = await fetch(`${url}/api/auth/device/code`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: clientId }),
  });
  if (response.status !== 200) throw new Error(`device code failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as DeviceCode;
}

/** One poll of the token endpoint, as the CLI does. */
export async function pollDeviceToken(url: string, deviceCode: string, clientId = 'till-cli') {
  const response = await fetch(`${url}/api/auth/device/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: deviceCode, client_id: clientId }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Clicks a submit button and waits for the page it leads to (there is no client-side script to wait for). */
export async function submit(page: Page, button: string) {
  const [response] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: button, exact: true }).click()]);
  return response;
}

/** Fills and sends the sign-in form on the current page (which must be /sign-in). */
export async function fillSignIn(page: Page, user: Pick<TestUser, 'email' | 'password'>) {
  await page.getByLabel('Email address').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  return submit(page, 'Sign in');
}

/** Opens /sign-in and signs in. */
export async function signInWithBrowser(page: Page, url: string, user: Pick<TestUser, 'email' | 'password'>): Promise<void> {
  await page.goto(`${url}/sign-in`);
  await fillSignIn(page, user);
}
