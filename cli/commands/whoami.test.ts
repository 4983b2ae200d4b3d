import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { deadServer, loginAs, signUp, tempConfigDir, till } from '../testing/till.js';

describe('till whoami', () => {
  let daemon: TestDaemon;
  beforeAll(async () => {
    daemon = await startTestDaemon({ TILL_DEVICE_CODE_INTERVAL: '1s' });
  });
  afterAll(() => daemon?.close());

  it('exits 3 with NOT_SIGNED_IN when no session is stored', async () => {
    const result = await till(['whoami', '--server', daemon.url], { TILL_CONFIG_DIR: tempConfigDir() });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`✗ Not signed in to ${daemon.url}.\n  Run \`till login\` to sign in.`);
  });

  it('reports NOT_SIGNED_IN as JSON on stderr with --json, and nothing on stdout', async () => {
    const result = await till(['whoami', '--json'], { TILL_CONFIG_DIR: tempConfigDir(), TILL_SERVER: daemon.url });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({ error: { code: 'NOT_SIGNED_IN', message: `Not signed in to ${daemon.url}.` } });
  });

  it('prints the user, role and session expiry of the stored session with --json', async () => {
    const dir = tempConfigDir();
    await loginAs(daemon.url, dir, 'Katherine Johnson');
    const result = await till(['whoami', '--json'], { TILL_CONFIG_DIR: dir });

    expect(result.exitCode).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(body).toEqual({
      server: daemon.url,
      user: { id: expect.any(String), email: expect.stringMatching(/@example\.com$/), name: 'Katherine Johnson', role: expect.any(String) },
      session: { expires_at: expect.any(String) },
    });
    expect(new Date(body.session.expires_at).getTime()).toBeGreaterThan(Date.now());
  });

  it('uses TILL_TOKEN and TILL_SERVER without reading or writing the config', async () => {
    const dir = tempConfigDir();
    const user = await signUp(daemon.url, 'Margaret Hamilton');
    const result = await till(['whoami', '--json'], { TILL_CONFIG_DIR: dir, TILL_SERVER: daemon.url, TILL_TOKEN: user.token });

    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).user).toMatchObject({ email: user.email, name: 'Margaret Hamilton' });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('lets TILL_TOKEN and TILL_SERVER override the stored profile', async () => {
    const dir = tempConfigDir();
    await loginAs(daemon.url, dir, 'Stored User');
    const other = await signUp(daemon.url, 'Token User');

    const byToken = await till(['whoami', '--json'], { TILL_CONFIG_DIR: dir, TILL_TOKEN: other.token });
    expect(JSON.parse(byToken.stdout).user.name).toBe('Token User');

    const elsewhere = await deadServer();
    const byServer = await till(['whoami', '--json'], { TILL_CONFIG_DIR: dir, TILL_SERVER: elsewhere });
    // The stored session belongs to another server: here there is none.
    expect(byServer.exitCode).toBe(3);
    expect(JSON.parse(byServer.stderr).error.message).toBe(`Not signed in to ${elsewhere}.`);
  });

  it('exits 3 with INVALID_TILL_TOKEN when the server no longer knows the session in TILL_TOKEN', async () => {
    const user = await signUp(daemon.url);
    await fetch(`${daemon.url}/api/auth/sign-out`, { method: 'POST', headers: { authorization: `Bearer ${user.token}`, origin: daemon.url } });
    const result = await till(['whoami', '--json'], { TILL_CONFIG_DIR: tempConfigDir(), TILL_SERVER: daemon.url, TILL_TOKEN: user.token });

    expect(result.exitCode).toBe(3);
    expect(JSON.parse(result.stderr).error.code).toBe('INVALID_TILL_TOKEN');
  });

  it('exits 8 with SERVER_UNREACHABLE when nothing listens at the server URL', async () => {
    const server = await deadServer();
    const result = await till(['whoami'], { TILL_CONFIG_DIR: tempConfigDir(), TILL_SERVER: server, TILL_TOKEN: 'some-token' });

    expect(result.exitCode).toBe(8);
    expect(result.stderr).toBe(`✗ Cannot reach ${server} (connection refused, ECONNREFUSED).\n  Is tilld running there? Start it with \`tilld\`, or point --server / TILL_SERVER at it.`);
  });

  it('exits 5 when TILL_SERVER is not an http(s) URL', async () => {
    const result = await till(['whoami', '--json'], { TILL_CONFIG_DIR: tempConfigDir(), TILL_SERVER: 'not a url' });
    expect(result.exitCode).toBe(5);
    expect(JSON.parse(result.stderr).error.code).toBe('INVALID_SERVER_URL');
  });

  it('fails with CONFIG_INVALID (exit 1) and names the file when the config is not JSON', async () => {
    const dir = tempConfigDir();
    writeFileSync(`${dir}/config.json`, '{not json');
    const result = await till(['whoami', '--json'], { TILL_CONFIG_DIR: dir });
    expect(result.exitCode).toBe(1);
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(`${dir}/config.json`);
  });

  it('does not create a config file just by looking for one', async () => {
    const dir = tempConfigDir();
    await till(['whoami', '--server', daemon.url], { TILL_CONFIG_DIR: dir });
    expect(existsSync(`${dir}/config.json`)).toBe(false);
  });
});
