import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CAPTCHA_PROVIDERS } from '../../core/auth/auth.js';
import { loadConfig } from '../config.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { authClient, signUp, TEST_PASSWORD, uniqueEmail } from '../testing/auth-client.js';

const SECRET = 'captcha-secret-never-echoed-0123456789';
const PASSING = 'passing-token';

/** What the fake provider was asked: the fields each real provider's siteverify receives. */
interface Verification {
  secret?: string;
  response?: string;
  remoteip?: string;
}

// A stand-in for the providers' siteverify endpoints, so the tests run offline. It answers as they
// do: {"success": true|false}, reading JSON (Turnstile) or a form (reCAPTCHA, hCaptcha, CaptchaFox).
let provider: Server;
let providerUrl: string;
const verifications: Verification[] = [];

beforeAll(async () => {
  provider = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const fields: Record<string, string> = req.headers['content-type']?.includes('json')
        ? JSON.parse(raw)
        : Object.fromEntries(new URLSearchParams(raw));
      verifications.push({ secret: fields.secret, response: fields.response, remoteip: fields.remoteip ?? fields.remoteIp });
      const success = fields.secret === SECRET && fields.response === PASSING;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success, ...(success ? {} : { 'error-codes': ['invalid-input-response'] }) }));
    });
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/siteverify`;
});
afterAll(async () => {
  await new Promise((resolve) => provider.close(resolve));
});

let daemon: TestDaemon | undefined;
afterEach(async () => {
  await daemon?.close();
  daemon = undefined;
  verifications.length = 0;
});

const signUpBody = () => ({ email: uniqueEmail('captcha'), password: TEST_PASSWORD, name: 'Captcha' });

describe('without TILL_CAPTCHA_PROVIDER and TILL_CAPTCHA_SECRET_KEY', () => {
  it('asks for no captcha', async () => {
    daemon = await startTestDaemon();
    await signUp(daemon.url);
    expect(verifications).toHaveLength(0);
  });

  it('stays off when only one of the two is set', () => {
    const base = { TILL_DATA_DIR: '/tmp', TILL_SECRET: 'x'.repeat(32) };
    expect(loadConfig({ ...base, TILL_CAPTCHA_PROVIDER: 'hcaptcha' }).captcha).toBeUndefined();
    expect(loadConfig({ ...base, TILL_CAPTCHA_SECRET_KEY: SECRET }).captcha).toBeUndefined();
  });

  it('refuses an unknown provider at start-up', () => {
    const env = { TILL_DATA_DIR: '/tmp', TILL_SECRET: 'x'.repeat(32), TILL_CAPTCHA_PROVIDER: 'recaptcha-v9', TILL_CAPTCHA_SECRET_KEY: SECRET };
    expect(() => loadConfig(env)).toThrow(/TILL_CAPTCHA_PROVIDER must be one of cloudflare-turnstile, google-recaptcha, hcaptcha, captchafox/);
  });
});

describe.each(CAPTCHA_PROVIDERS)('with TILL_CAPTCHA_PROVIDER=%s', (name) => {
  const start = async () =>
    (daemon = await startTestDaemon({ TILL_CAPTCHA_PROVIDER: name, TILL_CAPTCHA_SECRET_KEY: SECRET, TILL_CAPTCHA_VERIFY_URL: providerUrl }));

  it("refuses a sign-up without a captcha answer: 400 'Missing CAPTCHA response'", async () => {
    const { url } = await start();
    const res = await authClient(url).post('/sign-up/email', signUpBody());
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'MISSING_RESPONSE', message: 'Missing CAPTCHA response' });
    expect(verifications).toHaveLength(0);
  });

  it("refuses a sign-up the provider rejects: 403 'Captcha verification failed'", async () => {
    const { url } = await start();
    const res = await authClient(url).request('POST', '/sign-up/email', { body: signUpBody(), headers: { 'x-captcha-response': 'bot-token' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 'VERIFICATION_FAILED', message: 'Captcha verification failed' });
    expect(verifications).toEqual([{ secret: SECRET, response: 'bot-token', remoteip: '127.0.0.1' }]);
  });

  it('lets a sign-up the provider accepts through, then guards sign-in the same way', async () => {
    const { url } = await start();
    const body = signUpBody();
    const res = await authClient(url).request('POST', '/sign-up/email', { body, headers: { 'x-captcha-response': PASSING } });
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(body.email);
    const credentials = { email: body.email, password: body.password };
    expect((await authClient(url).post('/sign-in/email', credentials)).body.code).toBe('MISSING_RESPONSE');
    const signIn = await authClient(url).request('POST', '/sign-in/email', { body: credentials, headers: { 'x-captcha-response': PASSING } });
    expect(signIn.status).toBe(200);
  });

  it('never puts the secret key in a response or a log line', async () => {
    const { url } = await start();
    const res = await authClient(url).request('POST', '/sign-up/email', { body: signUpBody(), headers: { 'x-captcha-response': 'bot-token' } });
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
    expect(JSON.stringify(daemon!.logs)).not.toContain(SECRET);
  });
});

describe('when the provider cannot be reached', () => {
  // Better Auth fails closed with its generic 500 'Something went wrong' (SPEC §8 lists both messages).
  it('refuses the sign-up rather than skipping the check', async () => {
    daemon = await startTestDaemon({ TILL_CAPTCHA_PROVIDER: 'hcaptcha', TILL_CAPTCHA_SECRET_KEY: SECRET, TILL_CAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/siteverify' });
    const body = signUpBody();
    const res = await authClient(daemon.url).request('POST', '/sign-up/email', { body, headers: { 'x-captcha-response': PASSING } });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ code: 'UNKNOWN_ERROR', message: 'Something went wrong' });
    const retry = await authClient(daemon.url).request('POST', '/sign-in/email', { body: { email: body.email, password: body.password }, headers: { 'x-captcha-response': PASSING } });
    expect(retry.status).not.toBe(200);
  });
});
