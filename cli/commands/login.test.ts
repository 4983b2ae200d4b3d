import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { execa } from 'execa';
import { decide, firstLine, loginAs, serverSession, signUp, tempConfigDir, till, TILL_BIN, tillEnv } from '../testing/till.js';

describe('till login', () => {
  let daemon: TestDaemon;
  beforeAll(async () => {
    daemon = await startTestDaemon({ TILL_DEVICE_CODE_INTERVAL: '1s' });
  });
  afterAll(() => daemon?.close());

  it('prints the code as one JSON line off a TTY, signs in once it is approved, and stores the session in a 0600 file', async () => {
    const dir = tempConfigDir();
    const { result, code, user } = await loginAs(daemon.url, dir);

    expect(Object.keys(code).sort()).toEqual(['expires_in', 'user_code', 'verification_uri_complete']);
    expect(code.verification_uri_complete).toBe(`${daemon.baseUrl}/device?user_code=${code.user_code}`);
    expect(code.expires_in).toBe(1800);
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe(`✓ Signed in to ${daemon.url} as ${user.name} <${user.email}>`);
    expect(result.stderr).toContain(`Approve it at ${code.verification_uri_complete}`);

    const whoami = await till(['whoami', '--json'], { TILL_CONFIG_DIR: dir });
    expect(whoami.exitCode).toBe(0);
    expect(JSON.parse(whoami.stdout)).toMatchObject({ server: daemon.url, user: { email: user.email, name: user.name, role: 'admin' } });

    const file = join(dir, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const config = JSON.parse(readFileSync(file, 'utf8'));
    expect(config.current_server).toBe(daemon.url);
    // The CLI got a session of its own, not the browser's.
    const stored = config.profiles[daemon.url].token as string;
    expect(stored).not.toBe(user.token);
    expect((await serverSession(daemon.url, stored))?.user.email).toBe(user.email);
  });

  it('with --json writes only JSON lines on stdout: the code, then the signed-in user', async () => {
    const dir = tempConfigDir();
    const child = till(['login', '--server', daemon.url, '--json'], { TILL_CONFIG_DIR: dir });
    const code = JSON.parse(await firstLine(child));
    const user = await signUp(daemon.url, 'Grace Hopper');
    await decide(daemon.url, user.token, code.user_code, 'approve');
    const result = await child;

    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
    const [first, second, ...rest] = result.stdout.split('\n').map((line) => JSON.parse(line));
    expect(rest).toEqual([]);
    expect(first).toEqual(code);
    expect(second).toEqual({ server: daemon.url, user: { id: expect.any(String), email: user.email, name: 'Grace Hopper', role: 'user' } });
  });

  it('exits 3 with ACCESS_DENIED and stores nothing when the code is denied', async () => {
    const dir = tempConfigDir();
    const child = till(['login', '--server', daemon.url], { TILL_CONFIG_DIR: dir });
    const code = JSON.parse(await firstLine(child));
    const user = await signUp(daemon.url);
    await decide(daemon.url, user.token, code.user_code, 'deny');
    const result = await child;

    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('✗ The sign-in request was denied in the browser.');
    expect(result.stdout.split('\n')).toHaveLength(1);
    const whoami = await till(['whoami', '--json'], { TILL_CONFIG_DIR: dir });
    expect(whoami.exitCode).toBe(3);
  });

  it('reports ACCESS_DENIED as JSON on stderr with --json', async () => {
    const child = till(['login', '--server', daemon.url, '--json'], { TILL_CONFIG_DIR: tempConfigDir() });
    const code = JSON.parse(await firstLine(child));
    const user = await signUp(daemon.url);
    await decide(daemon.url, user.token, code.user_code, 'deny');
    const result = await child;

    expect(result.exitCode).toBe(3);
    expect(JSON.parse(result.stderr)).toEqual({ error: { code: 'ACCESS_DENIED', message: 'The sign-in request was denied in the browser.' } });
  });

  it('signs the replaced session out when signing in again to the same server', async () => {
    const dir = tempConfigDir();
    await loginAs(daemon.url, dir);
    const before = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).profiles[daemon.url].token as string;
    const again = await loginAs(daemon.url, dir, 'Second Login');

    expect(again.result.exitCode).toBe(0);
    expect(await serverSession(daemon.url, before)).toBeNull();
    const whoami = await till(['whoami', '--json'], { TILL_CONFIG_DIR: dir });
    expect(JSON.parse(whoami.stdout).user.name).toBe('Second Login');
  });

  it('on a terminal, shows the code and URL to a person instead of a JSON line, and opens no browser with --no-browser', async () => {
    const dir = tempConfigDir();
    // util-linux `script` runs till on a pseudo-terminal; its stdout carries both of till's streams.
    const child = execa('script', ['-qec', `${process.execPath} ${TILL_BIN} login --server ${daemon.url} --no-browser`, '/dev/null'], {
      env: tillEnv({ TILL_CONFIG_DIR: dir, NO_COLOR: '1' }),
      extendEnv: false,
      reject: false,
    });
    const userCode = await new Promise<string>((resolve) => {
      let seen = '';
      child.stdout.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /one-time code: ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(seen);
        if (match) resolve(match[1]);
      });
    });
    const user = await signUp(daemon.url);
    await decide(daemon.url, user.token, userCode.replace('-', ''), 'approve');
    const result = await child;

    expect(result.exitCode).toBe(0);
    expect(result.stdout).not.toContain('{"verification_uri_complete"');
    expect(result.stdout).toContain(`Approve it at ${daemon.baseUrl}/device?user_code=${userCode.replace('-', '')}`);
    expect(result.stdout).not.toContain('browser');
    expect(result.stdout).toContain(`✓ Signed in to ${daemon.url} as ${user.name} <${user.email}>`);
  });

  it('exits 8 when the server cannot be reached', async () => {
    const result = await till(['login', '--server', 'http://127.0.0.1:9', '--json'], { TILL_CONFIG_DIR: tempConfigDir() });
    expect(result.exitCode).toBe(8);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr).error.code).toBe('SERVER_UNREACHABLE');
  });
});

describe('till login with a short-lived code', () => {
  let daemon: TestDaemon;
  beforeAll(async () => {
    daemon = await startTestDaemon({ TILL_DEVICE_CODE_INTERVAL: '1s', TILL_DEVICE_CODE_EXPIRES_IN: '2s' });
  });
  afterAll(() => daemon?.close());

  it('exits 3 with DEVICE_CODE_EXPIRED when nobody approves the code in time', async () => {
    const result = await till(['login', '--server', daemon.url], { TILL_CONFIG_DIR: tempConfigDir() });

    expect(result.exitCode).toBe(3);
    expect(JSON.parse(result.stdout.split('\n')[0]).expires_in).toBe(2);
    expect(result.stderr).toContain('✗ The code expired before anyone approved it.');
    expect(result.stderr).toContain('Run `till login` again');
  });
});
