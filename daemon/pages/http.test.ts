import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { cookiesOf, newUser, pollDeviceToken, postForm, requestDeviceCode, signUpOverHttp } from './testing.js';

let daemon: TestDaemon;
let url: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  url = daemon.url;
});
afterAll(() => daemon?.close());

const get = (path: string, cookie?: string) => fetch(`${url}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });

describe('pages when signed out', () => {
  it('redirects / to the sign-in page', async () => {
    const response = await get('/');
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/sign-in');
  });

  it('redirects the account page to sign-in, coming back afterwards', async () => {
    const response = await get('/account');
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/sign-in?next=%2Faccount');
  });

  it('redirects a device link to sign-in, keeping the code in next', async () => {
    const response = await get('/device?user_code=abcd-1234');
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/sign-in?next=${encodeURIComponent('/device?user_code=abcd-1234')}`);
  });

  it('serves the sign-in page as HTML under a CSP that only allows its own stylesheet', async () => {
    const response = await get('/sign-in');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("style-src 'self'");
    const html = await response.text();
    expect(html.startsWith('<!DOCTYPE html><html lang="en">')).toBe(true);
    expect(html).toContain('<link rel="stylesheet" href="/assets/till.css"/>');
    expect(html).not.toMatch(/<style|style="|<script/);
    expect(html.match(/<h1/g)).toHaveLength(1);
    expect(html).toContain('<label for="field-email">Email address or username</label>');
  });

  it('serves the stylesheet itself, revalidated by ETag', async () => {
    const response = await get('/assets/till.css');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await response.text()).toContain('.field-error');
    const again = await fetch(`${url}/assets/till.css`, { headers: { 'if-none-match': response.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });

  it('answers /favicon.ico with a 16×16 icon', async () => {
    const response = await get('/favicon.ico');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/x-icon');
    const bytes = Buffer.from(await response.arrayBuffer());
    // ICONDIR: reserved 0, type 1 (icon), one image of 16×16 at 32 bits per pixel, whose bitmap follows.
    expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2), bytes.readUInt16LE(4)]).toEqual([0, 1, 1]);
    expect([bytes[6], bytes[7], bytes.readUInt16LE(12)]).toEqual([16, 16, 32]);
    expect(bytes.readUInt32LE(18) + bytes.readUInt32LE(14)).toBe(bytes.length);
    expect(bytes.readUInt32LE(22)).toBe(40);
  });

  it('says why a sign-in is asked for when /device sent the browser there', async () => {
    const redirected = await get('/device?user_code=ABCD-1234');
    const html = await (await get(redirected.headers.get('location')!)).text();
    expect(html).toContain('role="status"');
    expect(html).toContain('Sign in to approve the device');
    expect(await (await get('/sign-in')).text()).not.toContain('Sign in to approve the device');
  });

  it('drops an off-site next from the sign-in form', async () => {
    const html = await (await get('/sign-in?next=https%3A%2F%2Fevil.example%2F')).text();
    expect(html).toContain('name="next" value="/account"');
    expect(html).not.toContain('evil.example');
  });
});

describe('POST /sign-up and /sign-in', () => {
  it('signs up, sets the session cookie and redirects to next', async () => {
    const user = newUser('signup');
    const response = await postForm(url, '/sign-up', { ...user, next: '/device?user_code=AB' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/device?user_code=AB');
    expect(cookiesOf(response)).toContain('better-auth.session_token=');
  });

  it('refuses a short password with 400, keeping the name and email but not the password', async () => {
    const user = { ...newUser('short'), password: 'abc' };
    const response = await postForm(url, '/sign-up', user);
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toContain('Password too short');
    expect(html).toContain(`value="${user.email}"`);
    expect(html).toContain(`value="${user.name}"`);
    expect(html).toContain('aria-describedby="field-password-hint field-password-error"');
    expect(html).not.toContain('value="abc"');
  });

  it('refuses an email that is already taken with 422 and Better Auth\'s message', async () => {
    const user = newUser('taken');
    await signUpOverHttp(url, user);
    const response = await postForm(url, '/sign-up', user);
    expect(response.status).toBe(422);
    expect(await response.text()).toContain('User already exists. Use another email.');
  });

  it('refuses a malformed email beside its field, never showing Better Auth\'s internal field paths', async () => {
    const response = await postForm(url, '/sign-up', { ...newUser('malformed'), email: 'me@example' });
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toMatch(/id="field-email-error"[^>]*>.*Enter an email address, like you@example.com\./);
    expect(html).not.toContain('[body.');
  });

  it('refuses an empty form with 400 and a message on each field', async () => {
    const response = await postForm(url, '/sign-up', {});
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toContain('Enter your name.');
    expect(html).toContain('Enter your email address.');
    expect(html).toContain('Choose a password.');
  });

  it('refuses a wrong password with 401 and "Invalid email or password", keeping the email', async () => {
    const user = newUser('wrong');
    await signUpOverHttp(url, user);
    const response = await postForm(url, '/sign-in', { email: user.email, password: 'not the password' });
    expect(response.status).toBe(401);
    const html = await response.text();
    expect(html).toContain('Invalid email or password');
    expect(html).toContain(`value="${user.email}"`);
    expect(response.headers.getSetCookie()).toEqual([]);
  });

  it('signs in and redirects to a local next', async () => {
    const user = newUser('signin');
    await signUpOverHttp(url, user);
    const response = await postForm(url, '/sign-in', { email: user.email, password: user.password, next: '/account?x=1#top' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/account?x=1#top');
    expect(cookiesOf(response)).toContain('better-auth.session_token=');
  });

  it.each(['https://evil.example/', '//evil.example/', '/\\evil.example/', '/%5Cevil.example', 'javascript:alert(1)', ' /account', '/sign-in', '/.//evil.example', '/a/..//evil.example', '/%2e//evil.example'])(
    'refuses the open redirect next=%s and goes to /account',
    async (next) => {
      const user = newUser('next');
      await signUpOverHttp(url, user);
      const response = await postForm(url, '/sign-in', { email: user.email, password: user.password, next });
      expect(response.status).toBe(303);
      const location = response.headers.get('location')!;
      expect(new URL(location, url).origin).toBe(url);
      expect(location.startsWith('/') && !location.startsWith('//')).toBe(true);
    },
  );
});

describe('POST /sign-up and /sign-in with a username', () => {
  const username = (prefix: string) => `${prefix}_${Math.random().toString(36).slice(2, 8)}`;

  it('signs up with a username and signs in with it, whatever its case', async () => {
    const user = { ...newUser('named'), username: username('Named') };
    const signedUp = await postForm(url, '/sign-up', user);
    expect(signedUp.status).toBe(303);
    const response = await postForm(url, '/sign-in', { email: user.username.toUpperCase(), password: user.password, next: '/account' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/account');
    const account = await get('/account', cookiesOf(response));
    expect(await account.text()).toContain(user.email);
  });

  it('still signs up with no username given', async () => {
    const response = await postForm(url, '/sign-up', { ...newUser('unnamed'), username: '' });
    expect(response.status).toBe(303);
  });

  it('refuses a wrong password for a username with 401 and "Invalid username or password", keeping the username', async () => {
    const user = { ...newUser('named-wrong'), username: username('wrong') };
    await postForm(url, '/sign-up', user);
    const response = await postForm(url, '/sign-in', { email: user.username, password: 'not the password' });
    expect(response.status).toBe(401);
    const html = await response.text();
    expect(html).toContain('Invalid username or password');
    expect(html).toContain(`value="${user.username}"`);
    expect(response.headers.getSetCookie()).toEqual([]);
  });

  it('puts a username Better Auth refuses on the sign-in field', async () => {
    const response = await postForm(url, '/sign-in', { email: 'no spaces', password: 'whatever password' });
    expect(response.status).toBe(422);
    expect(await response.text()).toContain('<p id="field-email-error" class="field-error"><span class="visually-hidden">Error: </span>Username is invalid</p>');
  });

  it.each([
    ['ab', 400, 'Username is too short'],
    ['a'.repeat(31), 400, 'Username is too long'],
    ['not valid!', 400, 'Username is invalid'],
  ])('refuses the sign-up username %j with %i and "%s" on its field, keeping what was typed', async (typed, status, message) => {
    const user = { ...newUser('bad-username'), username: typed };
    const response = await postForm(url, '/sign-up', user);
    expect(response.status).toBe(status);
    const html = await response.text();
    expect(html).toContain(`<p id="field-username-error" class="field-error"><span class="visually-hidden">Error: </span>${message}</p>`);
    expect(html).toContain(`value="${typed}"`);
    expect(html).toContain(`value="${user.email}"`);
  });

  it('refuses a username already taken, in another case, on its field', async () => {
    const taken = username('Taken');
    await postForm(url, '/sign-up', { ...newUser('first-taken'), username: taken });
    const response = await postForm(url, '/sign-up', { ...newUser('second-taken'), username: taken.toUpperCase() });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('Username is already taken. Please try another.');
  });
});

describe('cross-origin posts', () => {
  it('refuses a post whose Origin is another site with 403', async () => {
    const user = newUser('csrf');
    const response = await postForm(url, '/sign-in', { email: user.email, password: user.password }, { origin: 'http://evil.example' });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('sent from another site');
  });

  it('refuses a post from another port of the same host with 403', async () => {
    const cookie = await signUpOverHttp(url, newUser('port'));
    const other = new URL(url);
    other.port = String(Number(other.port) + 1);
    const response = await postForm(url, '/sign-out', {}, { cookie, origin: other.origin });
    expect(response.status).toBe(403);
    expect((await get('/account', cookie)).status).toBe(200);
  });

  it('refuses a post without Origin whose Referer is another site with 403', async () => {
    const response = await fetch(`${url}/sign-out`, { method: 'POST', headers: { referer: 'http://evil.example/page' }, redirect: 'manual' });
    expect(response.status).toBe(403);
  });

  it('refuses Origin: null unless the browser says the post is same-origin', async () => {
    expect((await postForm(url, '/sign-out', {}, { origin: 'null' })).status).toBe(403);
    expect((await postForm(url, '/sign-out', {}, { origin: 'null', 'sec-fetch-site': 'same-origin' })).status).toBe(303);
  });

  it('accepts a post with neither Origin nor Referer', async () => {
    const response = await fetch(`${url}/sign-out`, { method: 'POST', redirect: 'manual' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/sign-in?notice=signed-out');
  });
});

describe('POST bodies', () => {
  it('refuses a form above 64 KiB with 413', async () => {
    const response = await postForm(url, '/sign-in', { email: 'a@example.com', password: 'x'.repeat(70 * 1024) });
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('treats a JSON body as an empty form (400), not a crash', async () => {
    const response = await fetch(`${url}/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: url },
      body: JSON.stringify({ email: 'a@example.com', password: 'x' }),
      redirect: 'manual',
    });
    expect(response.status).toBe(400);
  });
});

describe('/device over HTTP', () => {
  it('answers a code that does not exist with 400 and the code form', async () => {
    const cookie = await signUpOverHttp(url, newUser('nocode'));
    const response = await get('/device?user_code=ZZZZ-ZZZZ', cookie);
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toContain('Code not recognised');
    expect(html).toContain('name="user_code"');
  });

  it('asks again with 400 when the code is empty', async () => {
    const cookie = await signUpOverHttp(url, newUser('empty'));
    const response = await get('/device?user_code=--', cookie);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('Enter the code shown in your terminal.');
  });

  it('sends an approval for a code never looked at to the confirmation page instead', async () => {
    const cookie = await signUpOverHttp(url, newUser('unseen'));
    const code = await requestDeviceCode(url);
    const response = await postForm(url, '/device/approve', { user_code: code.user_code }, { cookie });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/device?user_code=${code.user_code}`);
    expect((await pollDeviceToken(url, code.device_code)).body.error).toBe('authorization_pending');
  });

  it('shows an expired code with 410', async () => {
    const cookie = await signUpOverHttp(url, newUser('expired'));
    const code = await requestDeviceCode(url);
    const { adapter } = await daemon.auth.$context;
    await adapter.update({ model: 'deviceCode', where: [{ field: 'userCode', value: code.user_code }], update: { expiresAt: new Date(Date.now() - 1000) } });
    const response = await get(`/device?user_code=${code.user_code}`, cookie);
    expect(response.status).toBe(410);
    expect(await response.text()).toContain('Code expired');
  });

  it('shows a code already approved with 409', async () => {
    const cookie = await signUpOverHttp(url, newUser('twice'));
    const code = await requestDeviceCode(url);
    expect((await get(`/device?user_code=${code.user_code}`, cookie)).status).toBe(200);
    expect((await postForm(url, '/device/approve', { user_code: code.user_code }, { cookie })).status).toBe(200);
    const again = await postForm(url, '/device/approve', { user_code: code.user_code }, { cookie });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('Code already used');
    expect((await get(`/device?user_code=${code.user_code}`, cookie)).status).toBe(409);
  });
});

describe('/account over HTTP', () => {
  it('never puts a session token in the page', async () => {
    const cookie = await signUpOverHttp(url, newUser('tokens'));
    const html = await (await get('/account', cookie)).text();
    const token = decodeURIComponent(/better-auth\.session_token=([^;]+)/.exec(cookie)![1]).split('.')[0];
    expect(token.length).toBeGreaterThan(10);
    expect(html).toContain('This session');
    expect(html).not.toContain(token);
  });

  it('does not revoke another user\'s session given its id', async () => {
    const theirs = await signUpOverHttp(url, newUser('theirs'));
    const mine = await signUpOverHttp(url, newUser('mine'));
    const theirId = /data-session-id="([^"]+)"/.exec(await (await get('/account', theirs)).text())![1];
    const response = await postForm(url, '/account/sessions/revoke', { session_id: theirId }, { cookie: mine });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/account?notice=session-not-found');
    expect((await get('/account', theirs)).status).toBe(200);
    expect((await get('/account', mine)).status).toBe(200);
  });

  it('signs out when you revoke this session itself', async () => {
    const cookie = await signUpOverHttp(url, newUser('self'));
    const ownId = /data-session-id="([^"]+)"/.exec(await (await get('/account', cookie)).text())![1];
    const response = await postForm(url, '/account/sessions/revoke', { session_id: ownId }, { cookie });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/sign-in?notice=signed-out');
    expect((await get('/account', cookie)).status).toBe(303);
  });
});

describe('logs', () => {
  it('never receive a password or a session token from the pages', async () => {
    const user = newUser('logs');
    const signedUp = await postForm(url, '/sign-up', { ...user });
    await postForm(url, '/sign-in', { email: user.email, password: 'a wrong password' });
    const token = decodeURIComponent(/better-auth\.session_token=([^;]+)/.exec(cookiesOf(signedUp))![1]).split('.')[0];
    await get('/account', cookiesOf(signedUp));
    const logs = JSON.stringify(daemon.logs);
    expect(logs).toContain('/sign-in');
    expect(logs).not.toContain(user.password);
    expect(logs).not.toContain('a wrong password');
    expect(logs).not.toContain(token);
  });
});

describe('a session past the fresh age', () => {
  let stale: TestDaemon;
  beforeAll(async () => {
    stale = await startTestDaemon({ TILL_SESSION_FRESH_AGE: '1' });
  });
  afterAll(() => stale?.close());

  it('still shows the account page, asking to sign in again to manage sessions', async () => {
    const cookie = await signUpOverHttp(stale.url, newUser('stale'));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const response = await fetch(`${stale.url}/account`, { headers: { cookie }, redirect: 'manual' });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('Sign in again</a> to see and revoke them');
    expect(html).not.toContain('data-session-id');
  });
});
