import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { authClient, signUp, TEST_PASSWORD, uniqueEmail, type AuthClient } from '../testing/auth-client.js';

// Budgets of core/auth/auth.ts: 10 a minute per client address for sign-in, sign-up and the device
// verification endpoints (RFC 8628 §5.1). Better Auth keeps the counters in one in-memory map per
// process, keyed "<client ip>|<path>", so each test speaks from an address of its own (127.0.0.x all
// reach the daemon on 127.0.0.1) and no test spends another's budget.
const BUDGET = 10;

let daemon: TestDaemon;
let victim: string;

beforeAll(async () => {
  // '' behaves as unset: only TILL_RATE_LIMIT=off turns limiting off (startTestDaemon defaults to off).
  daemon = await startTestDaemon({ TILL_RATE_LIMIT: '' });
  victim = (await signUp(daemon.url, {}, { localAddress: '127.0.0.2' })).user.email;
});
afterAll(async () => {
  await daemon?.close();
});
afterEach(() => {
  vi.useRealTimers();
});

const from = (address: string) => authClient(daemon.url, { localAddress: address, as: 'none' });
const wrongPassword = (client: AuthClient, headers: Record<string, string> = {}) =>
  client.request('POST', '/sign-in/email', { body: { email: victim, password: 'not the password' }, headers });

async function spend(times: number, attempt: () => Promise<{ status: number }>) {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) statuses.push((await attempt()).status);
  return statuses;
}

describe('with TILL_RATE_LIMIT unset', () => {
  it('is on', () => {
    expect(loadConfig({ TILL_DATA_DIR: '/tmp', TILL_SECRET: 'x'.repeat(32) }).rateLimit).toBe(true);
  });

  it('answers 429 to the 11th sign-in attempt within a minute, even with the right password', async () => {
    const client = from('127.0.0.11');
    expect(await spend(BUDGET, () => wrongPassword(client))).toEqual(Array(BUDGET).fill(401));
    const limited = await client.request('POST', '/sign-in/email', { body: { email: victim, password: TEST_PASSWORD } });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ message: 'Too many requests. Please try again later.' });
    expect(Number(limited.headers.get('x-retry-after'))).toBeGreaterThan(0);
  });

  it('gives the budget back once the minute is over', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const client = from('127.0.0.12');
    await spend(BUDGET, () => wrongPassword(client));
    expect((await wrongPassword(client)).status).toBe(429);
    vi.setSystemTime(Date.now() + 61_000);
    expect((await wrongPassword(client)).status).toBe(401);
  });

  it('answers 429 to the 11th sign-up within a minute', async () => {
    const client = from('127.0.0.13');
    const signUpOnce = () => client.post('/sign-up/email', { email: uniqueEmail(), password: TEST_PASSWORD, name: 'Bulk' });
    expect(await spend(BUDGET, signUpOnce)).toEqual(Array(BUDGET).fill(200));
    expect((await signUpOnce()).status).toBe(429);
  });

  it('answers 429 to the 11th user-code guess on GET /device within a minute', async () => {
    const client = from('127.0.0.14');
    const guess = () => client.get('/device', { user_code: Math.random().toString(36).slice(2, 10).toUpperCase() });
    expect(await spend(BUDGET, guess)).toEqual(Array(BUDGET).fill(400));
    expect((await guess()).status).toBe(429);
  });

  it('answers 429 to the 11th approval attempt within a minute', async () => {
    const client = from('127.0.0.15');
    const approve = () => client.post('/device/approve', { userCode: 'ABCDEFGH' });
    expect(await spend(BUDGET, approve)).toEqual(Array(BUDGET).fill(401));
    expect((await approve()).status).toBe(429);
  });

  it('ignores client-sent client-IP and X-Forwarded-For headers, so an attacker cannot rotate identities', async () => {
    const client = from('127.0.0.16');
    const spoofed = (i: number) => ({ 'x-till-client-ip': `203.0.113.${i}`, 'x-forwarded-for': `198.51.100.${i}` });
    let i = 0;
    expect(await spend(BUDGET, () => wrongPassword(client, spoofed(++i)))).toEqual(Array(BUDGET).fill(401));
    expect((await wrongPassword(client, spoofed(++i))).status).toBe(429);
  });

  it('keys the budget on the client address: another client is not limited', async () => {
    const attacker = from('127.0.0.17');
    await spend(BUDGET + 1, () => wrongPassword(attacker));
    expect((await wrongPassword(attacker)).status).toBe(429);
    const bystander = from('127.0.0.18');
    expect((await bystander.post('/sign-in/email', { email: victim, password: TEST_PASSWORD })).status).toBe(200);
  });

  it('keeps each path’s budget apart: a limited sign-in does not block session reads', async () => {
    const client = from('127.0.0.19');
    await spend(BUDGET + 1, () => wrongPassword(client));
    expect((await client.get('/get-session')).status).toBe(200);
  });
});

describe('with TILL_RATE_LIMIT=off', () => {
  it('never answers 429', async () => {
    const off = await startTestDaemon({ TILL_RATE_LIMIT: 'off' });
    try {
      const email = (await signUp(off.url)).user.email;
      const client = authClient(off.url, { localAddress: '127.0.0.20' });
      const statuses = await spend(BUDGET + 5, () => client.post('/sign-in/email', { email, password: 'not the password' }));
      expect(statuses).toEqual(Array(BUDGET + 5).fill(401));
    } finally {
      await off.close();
    }
  });
});

describe('behind a proxy (TILL_TRUST_PROXY=true)', () => {
  it('keys the budget on the address the proxy appended, not on what the client wrote before it', async () => {
    const proxied = await startTestDaemon({ TILL_RATE_LIMIT: '', TILL_TRUST_PROXY: 'true' });
    try {
      const client = authClient(proxied.url, { localAddress: '127.0.0.40', as: 'none' });
      const attempt = (i: number) =>
        client.request('POST', '/sign-in/email', {
          body: { email: 'nobody@example.com', password: 'not the password' },
          headers: { 'x-forwarded-for': `203.0.113.${i}, 198.51.100.7` },
        });
      const statuses: number[] = [];
      for (let i = 0; i <= BUDGET; i++) statuses.push((await attempt(i)).status);
      expect(statuses.slice(0, BUDGET)).toEqual(Array(BUDGET).fill(401));
      expect(statuses[BUDGET]).toBe(429);
    } finally {
      await proxied.close();
    }
  });
});
