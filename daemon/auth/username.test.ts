import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase } from '../../core/testing/database.js';
import { main } from '../main.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { authClient, signUp, TEST_PASSWORD, uniqueEmail, type AuthClient } from '../testing/auth-client.js';

// SPEC §8's username messages, as better-auth 1.7.25's username plugin words and codes them.

let daemon: TestDaemon;
let anonymous: AuthClient;

beforeAll(async () => {
  daemon = await startTestDaemon();
  anonymous = authClient(daemon.url);
  await signUp(daemon.url); // the first account becomes admin; the tests below are ordinary users
});
afterAll(async () => {
  await daemon?.close();
});

/** A username no other test uses, with upper-case letters so normalisation shows. */
const uniqueUsername = (prefix = 'Ada') => `${prefix}_${randomBytes(3).toString('hex')}`;

const signUpWith = (body: Record<string, unknown>) =>
  authClient(daemon.url).post('/sign-up/email', { email: uniqueEmail(), password: TEST_PASSWORD, name: 'Someone', ...body });

describe('signing up with a username', () => {
  it('stores the username lowercased and keeps the typed form as the display username', async () => {
    const username = uniqueUsername('Ada.Lovelace');
    const res = await signUpWith({ username });
    expect(res.status).toBe(200);
    expect(res.body.user.username).toBe(username.toLowerCase());
    expect(res.body.user.displayUsername).toBe(username);
  });

  it('keeps a separate display username when one is given', async () => {
    const username = uniqueUsername();
    const res = await signUpWith({ username, displayUsername: 'Ada Lovelace' });
    expect(res.status).toBe(200);
    expect(res.body.user.displayUsername).toBe('Ada Lovelace');
  });

  it('still signs up without a username', async () => {
    const res = await signUpWith({});
    expect(res.status).toBe(200);
    expect(res.body.user.username ?? null).toBeNull();
  });

  it('refuses a username already taken, whatever its case', async () => {
    const username = uniqueUsername();
    expect((await signUpWith({ username })).status).toBe(200);
    const again = await signUpWith({ username: username.toUpperCase() });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ code: 'USERNAME_IS_ALREADY_TAKEN', message: 'Username is already taken. Please try another.' });
  });

  it('refuses a username shorter than 3 characters', async () => {
    const res = await signUpWith({ username: 'ab' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'USERNAME_TOO_SHORT', message: 'Username is too short' });
  });

  it('refuses a username longer than 30 characters', async () => {
    const res = await signUpWith({ username: 'a'.repeat(31) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'USERNAME_TOO_LONG', message: 'Username is too long' });
  });

  it.each(['ada lovelace', 'ada-lovelace', 'ada@example', 'adä'])('refuses the username %j as invalid', async (username) => {
    const res = await signUpWith({ username });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'INVALID_USERNAME', message: 'Username is invalid' });
  });

  it('accepts letters, digits, underscores and dots', async () => {
    const res = await signUpWith({ username: `a.b_C9${randomBytes(2).toString('hex')}` });
    expect(res.status).toBe(200);
  });

  it.each(['   ', 'Ada <script>', 'x'.repeat(61)])('refuses the display username %j as invalid', async (displayUsername) => {
    const res = await signUpWith({ username: uniqueUsername(), displayUsername });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'INVALID_DISPLAY_USERNAME', message: 'Display username is invalid' });
  });

  it('creates no account when the username is refused', async () => {
    const email = uniqueEmail();
    await authClient(daemon.url).post('/sign-up/email', { email, password: TEST_PASSWORD, name: 'X', username: 'a b' });
    const signIn = await anonymous.post('/sign-in/email', { email, password: TEST_PASSWORD });
    expect(signIn.status).toBe(401);
  });
});

describe('POST /api/auth/sign-in/username', () => {
  it('signs in by username whatever its case, with a session like an email sign-in', async () => {
    const username = uniqueUsername();
    const email = uniqueEmail();
    expect((await signUpWith({ email, username })).status).toBe(200);

    const client = authClient(daemon.url);
    const res = await client.post('/sign-in/username', { username: username.toUpperCase(), password: TEST_PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(email);
    expect(res.body.token).toEqual(expect.any(String));
    const session = await client.get('/get-session');
    expect(session.body.user.username).toBe(username.toLowerCase());
  });

  it('refuses a wrong password with 401 INVALID_USERNAME_OR_PASSWORD', async () => {
    const username = uniqueUsername();
    await signUpWith({ username });
    const client = authClient(daemon.url);
    const res = await client.post('/sign-in/username', { username, password: 'not the password' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: 'INVALID_USERNAME_OR_PASSWORD', message: 'Invalid username or password' });
    expect(client.jar.size).toBe(0);
  });

  it('answers an unknown username exactly like a wrong password', async () => {
    const res = await anonymous.post('/sign-in/username', { username: uniqueUsername('nobody'), password: TEST_PASSWORD });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: 'INVALID_USERNAME_OR_PASSWORD', message: 'Invalid username or password' });
  });

  it('answers 422 to a username no account could have', async () => {
    const res = await anonymous.post('/sign-in/username', { username: 'no spaces allowed', password: TEST_PASSWORD });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ code: 'INVALID_USERNAME', message: 'Username is invalid' });
  });
});

describe('POST /api/auth/is-username-available', () => {
  it('says a free username is available and a taken one, in any case, is not', async () => {
    const username = uniqueUsername();
    expect((await anonymous.post('/is-username-available', { username })).body).toEqual({ available: true });
    await signUpWith({ username });
    const taken = await anonymous.post('/is-username-available', { username: username.toUpperCase() });
    expect(taken.status).toBe(200);
    expect(taken.body).toEqual({ available: false });
  });

  it('answers 422 with the rule a username breaks', async () => {
    const short = await anonymous.post('/is-username-available', { username: 'ab' });
    expect(short.status).toBe(422);
    expect(short.body).toEqual({ code: 'USERNAME_TOO_SHORT', message: 'Username is too short' });
    const long = await anonymous.post('/is-username-available', { username: 'a'.repeat(31) });
    expect(long.body.code).toBe('USERNAME_TOO_LONG');
    const invalid = await anonymous.post('/is-username-available', { username: 'a-b-c' });
    expect(invalid.body.code).toBe('INVALID_USERNAME');
  });
});

describe('changing a username', () => {
  it('lets a user take a free username and refuses one another user holds', async () => {
    const taken = uniqueUsername();
    await signUpWith({ username: taken });
    const { client } = await signUp(daemon.url);
    const fresh = uniqueUsername();
    expect((await client.post('/update-user', { username: fresh })).status).toBe(200);
    expect((await client.get('/get-session')).body.user.username).toBe(fresh.toLowerCase());
    const refused = await client.post('/update-user', { username: taken.toUpperCase() });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('USERNAME_IS_ALREADY_TAKEN');
  });
});

describe('with a captcha configured', () => {
  it("asks for the captcha on a username sign-in too: 400 'Missing CAPTCHA response'", async () => {
    // The answer is refused before the provider would be asked, so its URL is never reached.
    const guarded = await startTestDaemon({
      TILL_CAPTCHA_PROVIDER: 'hcaptcha',
      TILL_CAPTCHA_SECRET_KEY: 'captcha-secret-0123456789',
      TILL_CAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/siteverify',
    });
    try {
      const res = await authClient(guarded.url).post('/sign-in/username', { username: 'ada_lovelace', password: TEST_PASSWORD });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 'MISSING_RESPONSE', message: 'Missing CAPTCHA response' });
    } finally {
      await guarded.close();
    }
  });
});

describe('tilld users create --username', () => {
  it('creates an account with its username lowercased, and refuses a taken or invalid one with exit 5', async () => {
    const database = await createTestDatabase();
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void out.push(args.join(' ')));
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void err.push(args.join(' ')));
    const env = {
      TILL_DATA_DIR: mkdtempSync(join(tmpdir(), 'till-users-')),
      TILL_DATABASE_URL: database.config.client === 'postgres' ? database.config.connectionString : database.config.filename,
      TILL_SECRET: 'users-test-secret-users-test-secret-0123',
    };
    const create = (...args: string[]) => main(['users', 'create', '--password', TEST_PASSWORD, '--json', ...args], env);
    try {
      expect(await create('--email', uniqueEmail(), '--username', 'Ops.Admin')).toBe(0);
      expect(JSON.parse(out[0]!)).toMatchObject({ role: 'admin', username: 'ops.admin' });

      expect(await create('--email', uniqueEmail(), '--username', 'OPS.ADMIN')).toBe(5);
      expect(await create('--email', uniqueEmail(), '--username', 'no spaces')).toBe(5);
      expect(err).toEqual(['tilld: Username is already taken. Please try another.', 'tilld: Username is invalid']);
    } finally {
      vi.restoreAllMocks();
      await database.destroy();
    }
  });
});
