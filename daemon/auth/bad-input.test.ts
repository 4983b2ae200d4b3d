import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { authClient, signUp, TEST_PASSWORD, uniqueEmail, type SignedIn } from '../testing/auth-client.js';

let daemon: TestDaemon;
let user: SignedIn;

beforeAll(async () => {
  daemon = await startTestDaemon();
  user = await signUp(daemon.url);
});
afterAll(async () => {
  await daemon?.close();
});

/** A raw request to /api/auth with a body sent exactly as given. */
async function raw(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${daemon.url}/api/auth${path}`, {
    method,
    headers: { origin: daemon.url, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body,
  });
  return { status: res.status, text: await res.text() };
}

const cookies = () => [...user.client.jar].map(([k, v]) => `${k}=${v}`).join('; ');

describe('malformed auth requests', () => {
  it('answer sign-up with an empty or null body with a 4xx', async () => {
    for (const body of ['', 'null', '[]', '"text"', '42']) {
      const res = await raw('POST', '/sign-up/email', body);
      expect([body, res.status]).toEqual([body, res.status < 500 && res.status >= 400 ? res.status : 'a 4xx']);
    }
  });

  it('answer update-user with no body or a name that is not text with a 4xx, changing nothing', async () => {
    for (const body of [undefined, '', 'null', '{"name": 5}', '{"name": {"a": 1}}', '{"name": null}', '{"image": 5}']) {
      const res = await raw('POST', '/update-user', body, { cookie: cookies() });
      expect([body, res.status >= 400 && res.status < 500]).toEqual([body, true]);
    }
    expect((await user.client.get('/get-session', { disableCookieCache: true })).body.user.name).toBe(user.user.name);
  });

  it('refuse a NUL character in any field, with or without a session, before the database', async () => {
    const requests: [string, string, string | undefined, Record<string, string>][] = [
      ['GET', '/device?user_code=AB%00CD', undefined, {}],
      ['POST', '/reset-password', JSON.stringify({ token: 'to\u0000ken', newPassword: TEST_PASSWORD }), {}],
      ['POST', '/device/token', JSON.stringify({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'a\u0000b', client_id: 'till-cli' }), {}],
      ['POST', '/sign-up/email', JSON.stringify({ email: uniqueEmail(), password: TEST_PASSWORD, name: 'Nul\u0000Name' }), {}],
      ['POST', '/sign-in/email', JSON.stringify({ email: 'a\u0000@example.com', password: TEST_PASSWORD }), {}],
      ['POST', '/update-user', JSON.stringify({ name: 'x\u0000y' }), { cookie: cookies() }],
      ['POST', '/organization/create', JSON.stringify({ name: 'Nul\u0000Org', slug: 'nul-org' }), { cookie: cookies() }],
      ['POST', '/is-username-available', JSON.stringify({ username: 'ab\u0000c' }), {}],
    ];
    for (const [method, path, body, headers] of requests) {
      const res = await raw(method, path, body, headers);
      expect([path, res.status]).toEqual([path, 400]);
      expect(JSON.parse(res.text)).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
  });

  it('bound a callbackURL, and never log a long one whole', async () => {
    const long = `/${'c'.repeat(600 * 1024)}`;
    const res = await raw('POST', '/sign-in/email', JSON.stringify({ email: user.user.email, password: TEST_PASSWORD, callbackURL: long }));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'VALIDATION_ERROR', message: '[body.callbackURL] At most 2048 characters' });
    expect(res.text.length).toBeLessThan(1000);
    expect(JSON.stringify(daemon.logs)).not.toContain('c'.repeat(2049));
    // An untrusted one within the bound is refused by Better Auth, which logs it: clipped.
    const foreign = `https://evil.example/${'d'.repeat(2000)}`;
    const refused = await raw('POST', '/sign-in/email', JSON.stringify({ email: user.user.email, password: TEST_PASSWORD, callbackURL: foreign }));
    expect(refused.status).toBe(403);
    expect(daemon.logs.some((line) => String(line.msg).startsWith('Invalid callbackURL: https://evil.example/ddd'))).toBe(true);
    expect(JSON.stringify(daemon.logs)).not.toContain('d'.repeat(500));
  });

  it('answer requests that race for one slug or one address with one success and 409s, never a 500', async () => {
    const slug = `race-${Math.random().toString(36).slice(2, 8)}`;
    const creates = await Promise.all(Array.from({ length: 6 }, () => raw('POST', '/organization/create', JSON.stringify({ name: 'Race', slug }), { cookie: cookies() })));
    const created = creates.map((res) => res.status).sort();
    expect(created.filter((status) => status === 200)).toHaveLength(1);
    expect(created.every((status) => status === 200 || status === 400 || status === 409)).toBe(true);

    const email = uniqueEmail('race');
    const signUps = await Promise.all(Array.from({ length: 6 }, () => raw('POST', '/sign-up/email', JSON.stringify({ email, password: TEST_PASSWORD, name: 'Race' }))));
    const answered = signUps.map((res) => res.status);
    expect(answered.filter((status) => status === 200)).toHaveLength(1);
    expect(answered.every((status) => status === 200 || status === 409 || status === 422)).toBe(true);
    for (const res of signUps) expect(res.text).not.toMatch(/\bat .+:\d+:\d+|select |insert into|duplicate key/i);
  });

  it('never answer with a stack trace or SQL', async () => {
    const res = await raw('POST', '/sign-up/email', '{"email": 1, "password": [], "name": {}}');
    expect(res.status).toBe(400);
    expect(res.text).not.toMatch(/\bat .+:\d+:\d+|select |insert into/i);
  });
});
