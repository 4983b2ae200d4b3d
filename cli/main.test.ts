import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { TILL_BIN, tempConfigDir, till, tillEnv } from './testing/till.js';

const version = (await import('../package.json', { with: { type: 'json' } })).default.version;

/** Runs `till` on a pseudo-terminal (util-linux `script`), where stdout and stderr are TTYs. */
function tillOnTerminal(args: string, env: Record<string, string>) {
  return execa('script', ['-qec', `${process.execPath} ${TILL_BIN} ${args}`, '/dev/null'], { env: tillEnv(env), extendEnv: false, reject: false });
}

describe('till', () => {
  it('prints its version with --version', async () => {
    const result = await till(['--version'], {});
    expect(result).toMatchObject({ exitCode: 0, stdout: version });
  });

  it('prints help listing every command with --help', async () => {
    const result = await till(['--help'], {});
    expect(result.exitCode).toBe(0);
    for (const command of ['login', 'logout', 'whoami', 'status']) expect(result.stdout).toContain(command);
  });

  it('exits 2 on an unknown option and says which', async () => {
    const result = await till(['whoami', '--bogus'], { TILL_CONFIG_DIR: tempConfigDir() });
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("✗ unknown option '--bogus'");
  });

  it('exits 2 on an unknown command, as JSON on stderr with --json', async () => {
    const result = await till(['frobnicate', '--json'], {});
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({ error: { code: 'USAGE', message: "unknown command 'frobnicate'" } });
  });

  it('exits 2 with the help on stderr when run without a command', async () => {
    const result = await till([], {});
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('Usage: till');
  });

  it('exits 2 on arguments a command does not take', async () => {
    const result = await till(['whoami', 'someone'], { TILL_CONFIG_DIR: tempConfigDir() });
    expect(result.exitCode).toBe(2);
  });

  it('writes no colour off a terminal', async () => {
    const result = await till(['whoami', '--server', 'http://127.0.0.1:4010'], { TILL_CONFIG_DIR: tempConfigDir() });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).not.toContain('\x1b[');
  });

  it('writes colour on a terminal, and none when NO_COLOR is set', async () => {
    const dir = tempConfigDir();
    const coloured = await tillOnTerminal('whoami --server http://127.0.0.1:4010', { TILL_CONFIG_DIR: dir, TERM: 'xterm' });
    expect(coloured.exitCode).toBe(3);
    expect(coloured.stdout).toContain('\x1b[31m✗\x1b[39m Not signed in');

    const plain = await tillOnTerminal('whoami --server http://127.0.0.1:4010', { TILL_CONFIG_DIR: dir, TERM: 'xterm', NO_COLOR: '1' });
    expect(plain.exitCode).toBe(3);
    expect(plain.stdout).toContain('✗ Not signed in');
    expect(plain.stdout).not.toContain('\x1b[');
  });
});
