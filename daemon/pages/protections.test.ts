import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { newUser, postForm, signUpOverHttp } from './testing.js';

/** Sign-in and sign-up through the pages get Better Auth's captcha check and rate limits, not a way around them. */

describe('captcha on the page forms', () => {
  let verifier: Server;
  let daemon: TestDaemon;
  const answers: string[] = [];

  beforeAll(async () => {
    // Stands in for hCaptcha's siteverify: only "human" passes.
    verifier = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const response = new URLSearchParams(body).get('response') ?? '';
        answers.push(response);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ success: response === 'human' }));
      });
    });
    await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
    daemon = await startTestDaemon({
      TILL_CAPTCHA_PROVIDER: 'hcaptcha',
      TILL_CAPTCHA_SECRET_KEY: 'test-captcha-secret',
      TILL_CAPTCHA_VERIFY_URL: `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`,
    });
  });
  afterAll(async () => {
    await daemon?.close();
    await new Promise<void>((resolve) => verifier.close(() => resolve()));
  });

  it('renders the captcha hook in the forms', async () => {
    const html = await (await fetch(`${daemon.url}/sign-up`)).text();
    expect(html).toContain('data-captcha-provider="hcaptcha"');
    expect(html).toContain('name="captcha_response"');
  });

  it('refuses a sign-up without a captcha answer with 400 "Missing CAPTCHA response"', async () => {
    const response = await postForm(daemon.url, '/sign-up', { ...newUser('nocaptcha'), captcha_response: '' });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('Missing CAPTCHA response');
  });

  it('refuses a wrong captcha answer with 403', async () => {
    const response = await postForm(daemon.url, '/sign-up', { ...newUser('robot'), captcha_response: 'robot' });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('Captcha verification failed');
    expect(answers).toContain('robot');
  });

  it('signs up and in with a right answer, from our field or the widget\'s own', async () => {
    const user = newUser('human');
    const signedUp = await postForm(daemon.url, '/sign-up', { ...user, captcha_response: 'human' });
    expect(signedUp.status).toBe(303);
    const signedIn = await postForm(daemon.url, '/sign-in', { email: user.email, password: user.password, 'h-captcha-response': 'human' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe('/account');
  });
});

describe('rate limits on the page forms', () => {
  let daemon: TestDaemon;

  beforeAll(async () => {
    daemon = await startTestDaemon({ TILL_RATE_LIMIT: 'on' });
  });
  afterAll(() => daemon?.close());

  it('answers the eleventh sign-in within a minute with 429 and a message', async () => {
    const user = newUser('guesser');
    await signUpOverHttp(daemon.url, user);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 11; attempt++) {
      const response = await postForm(daemon.url, '/sign-in', { email: user.email, password: `guess ${attempt}` });
      statuses.push(response.status);
      if (response.status === 429) expect(await response.text()).toContain('Too many requests');
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
  });
});
