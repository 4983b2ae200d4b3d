import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { loginAs, serverSession, signUp, tempConfigDir, till } from '../testing/till.js';

const storedToken = (dir: string, server: string): string | undefined =>
  JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).profiles?.[server]?.token;

describe('till logout', () => {
  let daemon: TestDaemon;
  beforeAll(async () => {
    daemon = await startTestDaemon({ TILL_DEVICE_CODE_INTERVAL: '1s' });
  });
  afterAll(() => daemon?.close());

  it('revokes the stored session on the server and forgets it locally', async () => {
    const dir = tempConfigDir();
    await loginAs(daemon.url, dir);
    const token = storedToken(dir, daemon.url)!;
    expect(await serverSession(daemon.url, token)).not.toBeNull();

    const result = await till(['logout', '--json'], { TILL_CONFIG_DIR: dir });

    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ server: daemon.url, revoked: true, forgotten: true, token_source: 'profile' });
    expect(await serverSession(daemon.url, token)).toBeNull();
    expect(storedToken(dir, daemon.url)).toBeUndefined();
    const whoami = await till(['whoami'], { TILL_CONFIG_DIR: dir });
    expect(whoami.exitCode).toBe(3);
  });

  it('revokes a TILL_TOKEN session and leaves the stored one alone', async () => {
    const dir = tempConfigDir();
    await loginAs(daemon.url, dir);
    const stored = storedToken(dir, daemon.url)!;
    const ci = await signUp(daemon.url);

    const result = await till(['logout'], { TILL_CONFIG_DIR: dir, TILL_TOKEN: ci.token });

    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(`Signed out of ${daemon.url}`);
    expect(await serverSession(daemon.url, ci.token)).toBeNull();
    expect(await serverSession(daemon.url, stored)).not.toBeNull();
    expect(storedToken(dir, daemon.url)).toBe(stored);
  });

  it('exits 3 when there is no session to sign out of', async () => {
    const result = await till(['logout', '--server', daemon.url, '--json'], { TILL_CONFIG_DIR: tempConfigDir() });
    expect(result.exitCode).toBe(3);
    expect(JSON.parse(result.stderr).error.code).toBe('NOT_SIGNED_IN');
  });
});

describe('till logout when the server is gone', () => {
  it('keeps the session (exit 8) so logout can be retried, and --local forgets it without the server', async () => {
    const daemon = await startTestDaemon({ TILL_DEVICE_CODE_INTERVAL: '1s' });
    const dir = tempConfigDir();
    try {
      await loginAs(daemon.url, dir);
    } finally {
      await daemon.close();
    }

    const refused = await till(['logout'], { TILL_CONFIG_DIR: dir });
    expect(refused.exitCode).toBe(8);
    expect(storedToken(dir, daemon.url)).toBeDefined();

    const local = await till(['logout', '--local', '--json'], { TILL_CONFIG_DIR: dir });
    expect(local.exitCode).toBe(0);
    expect(JSON.parse(local.stdout)).toMatchObject({ revoked: false, forgotten: true });
    expect(storedToken(dir, daemon.url)).toBeUndefined();
  });
});
