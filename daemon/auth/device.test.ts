import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config.js';
import { main } from '../main.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { authClient, bearerClient, signUp, type AuthClient, type SignedIn } from '../testing/auth-client.js';

// RFC 8628 over HTTP. Date is faked in-process, so polling intervals and expiry are exact.
const SECOND = 1000;
const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
const TIME_STRING_MESSAGE = "Invalid time string format. Use formats like '30m', '5s', '1h', etc.";

let daemon: TestDaemon;
let device: AuthClient; // the CLI: no session, just the device code
let alice: SignedIn;
let bob: SignedIn;

beforeAll(async () => {
  daemon = await startTestDaemon();
  device = authClient(daemon.url, { as: 'none' });
  alice = await signUp(daemon.url);
  bob = await signUp(daemon.url);
});
afterAll(async () => {
  await daemon?.close();
});
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const requestCode = async () => {
  const res = await device.post('/device/code', { client_id: 'till-cli' });
  expect(res.status).toBe(200);
  return res.body as { device_code: string; user_code: string; expires_in: number; interval: number; verification_uri: string; verification_uri_complete: string };
};
const poll = (deviceCode: string, clientId = 'till-cli') =>
  device.post('/device/token', { grant_type: GRANT_TYPE, device_code: deviceCode, client_id: clientId });
const later = (ms: number) => vi.setSystemTime(Date.now() + ms);
/** The signed-in user opens the verification page: this claims a pending code for them. */
const claim = (who: SignedIn, userCode: string) => who.client.get('/device', { user_code: userCode });

describe('device authorization request', () => {
  it('issues codes with the SPEC defaults: 40-character device code, 8-character user code, 1800 s, 5 s', async () => {
    const code = await requestCode();
    expect(code.device_code).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(code.user_code).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
    expect(code.expires_in).toBe(1800);
    expect(code.interval).toBe(5);
    expect(code.verification_uri).toBe(`${daemon.baseUrl}/device`);
    expect(code.verification_uri_complete).toBe(`${daemon.baseUrl}/device?user_code=${code.user_code}`);
  });

  it('refuses an unknown client_id', async () => {
    const res = await device.post('/device/code', { client_id: 'someone-else' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'Invalid client ID' });
  });
});

describe('polling', () => {
  it('answers authorization_pending, then slow_down when polled faster than the interval', async () => {
    const code = await requestCode();
    expect((await poll(code.device_code)).body.error).toBe('authorization_pending');
    later(4 * SECOND);
    const tooSoon = await poll(code.device_code);
    expect(tooSoon.status).toBe(400);
    expect(tooSoon.body).toEqual({ error: 'slow_down', error_description: 'Polling too frequently' });
    later(5 * SECOND);
    expect((await poll(code.device_code)).body.error).toBe('authorization_pending');
  });

  it('issues a bearer token once the user approves, which get-session accepts, and only once', async () => {
    const code = await requestCode();
    expect((await claim(alice, code.user_code)).body).toMatchObject({ status: 'pending', client_id: 'till-cli' });
    const approved = await alice.client.post('/device/approve', { userCode: code.user_code });
    expect(approved.body).toEqual({ success: true });
    const res = await poll(code.device_code);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 7 * 24 * 3600 });
    const session = await bearerClient(daemon.url, res.body.access_token).get('/get-session');
    expect(session.body.user.id).toBe(alice.user.id);
    later(5 * SECOND);
    expect((await poll(code.device_code)).body.error).toBe('invalid_grant');
  });

  it('answers access_denied after the user denies', async () => {
    const code = await requestCode();
    await claim(alice, code.user_code);
    expect((await alice.client.post('/device/deny', { userCode: code.user_code })).body).toEqual({ success: true });
    const res = await poll(code.device_code);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'access_denied', error_description: 'Access denied' });
  });

  it('answers expired_token once the code is older than 30 minutes', async () => {
    const code = await requestCode();
    later(30 * 60 * SECOND + SECOND);
    expect((await claim(alice, code.user_code)).body).toEqual({ error: 'expired_token', error_description: 'User code has expired' });
    expect((await alice.client.post('/device/approve', { userCode: code.user_code })).body.error).toBe('expired_token');
    expect((await poll(code.device_code)).body).toEqual({ error: 'expired_token', error_description: 'Device code has expired' });
  });

  it('refuses a poll from another client than the one the code was issued to', async () => {
    const code = await requestCode();
    expect((await poll(code.device_code, 'someone-else')).body.error).toBe('invalid_client');
  });

  it('refuses an unknown device code', async () => {
    expect((await poll('x'.repeat(40))).body.error).toBe('invalid_grant');
  });
});

describe('approval', () => {
  it('refuses a second user approving or denying someone else’s claimed code', async () => {
    const code = await requestCode();
    await claim(alice, code.user_code);
    // Bob may see the status, not whose request it is.
    expect((await claim(bob, code.user_code)).body).toEqual({ user_code: code.user_code, status: 'pending' });
    const approve = await bob.client.post('/device/approve', { userCode: code.user_code });
    expect(approve.status).toBe(403);
    expect(approve.body).toEqual({ error: 'access_denied', error_description: 'You are not authorized to approve this device authorization' });
    const deny = await bob.client.post('/device/deny', { userCode: code.user_code });
    expect(deny.status).toBe(403);
    expect(deny.body.error).toBe('access_denied');
    expect((await poll(code.device_code)).body.error).toBe('authorization_pending');
  });

  it('refuses to approve a code nobody has opened the verification page for', async () => {
    const code = await requestCode();
    const res = await alice.client.post('/device/approve', { userCode: code.user_code });
    expect(res.status).toBe(400);
    expect(res.body.error_description).toMatch(/^Device code has not been claimed/);
  });

  it('refuses to approve a code twice', async () => {
    const code = await requestCode();
    await claim(alice, code.user_code);
    await alice.client.post('/device/approve', { userCode: code.user_code });
    const again = await alice.client.post('/device/deny', { userCode: code.user_code });
    expect(again.status).toBe(400);
    expect(again.body.error_description).toBe('Device code already processed');
  });
});

describe('TILL_DEVICE_CODE_EXPIRES_IN and TILL_DEVICE_CODE_INTERVAL', () => {
  it('are honoured', async () => {
    const custom = await startTestDaemon({ TILL_DEVICE_CODE_EXPIRES_IN: '10m', TILL_DEVICE_CODE_INTERVAL: '2s' });
    try {
      const cli = authClient(custom.url, { as: 'none' });
      const code = (await cli.post('/device/code', { client_id: 'till-cli' })).body;
      expect(code).toMatchObject({ expires_in: 600, interval: 2 });
      const pollCustom = () => cli.post('/device/token', { grant_type: GRANT_TYPE, device_code: code.device_code, client_id: 'till-cli' });
      await pollCustom();
      later(1 * SECOND);
      expect((await pollCustom()).body.error).toBe('slow_down');
      later(2 * SECOND);
      expect((await pollCustom()).body.error).toBe('authorization_pending');
      later(10 * 60 * SECOND);
      expect((await pollCustom()).body.error).toBe('expired_token');
    } finally {
      await custom.close();
    }
  });

  it.each(['TILL_DEVICE_CODE_EXPIRES_IN', 'TILL_DEVICE_CODE_INTERVAL'])('refuses a bad time string in %s with Better Auth’s message', (name) => {
    expect(() => loadConfig({ TILL_DATA_DIR: tempDir(), TILL_SECRET: 'x'.repeat(32), [name]: 'soon' })).toThrow(`${name}="soon": ${TIME_STRING_MESSAGE}`);
  });

  it('makes tilld refuse to start, printing the message and exiting 2', async () => {
    const errors: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void errors.push(args.join(' ')));
    try {
      const code = await main(['serve'], { TILL_DATA_DIR: tempDir(), TILL_SECRET: 'x'.repeat(32), TILL_PORT: '0', TILL_DEVICE_CODE_INTERVAL: '5 sec-ish' });
      expect(code).toBe(2);
      expect(errors.join('\n')).toContain(TIME_STRING_MESSAGE);
    } finally {
      spy.mockRestore();
    }
  });
});

function tempDir() {
  return mkdtempSync(join(tmpdir(), 'till-device-'));
}
