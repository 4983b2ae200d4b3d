import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../core/testing/database.js';

const tilld = join(import.meta.dirname, '..', 'bin', 'tilld');

async function environment(): Promise<{ env: Record<string, string>; database: TestDatabase }> {
  const database = await createTestDatabase();
  const url = database.config.client === 'postgres' ? database.config.connectionString : database.config.filename;
  await database.db.destroy();
  return { database, env: { PATH: process.env.PATH ?? '', TILL_DATA_DIR: mkdtempSync(join(tmpdir(), 'till-banner-')), TILL_DATABASE_URL: url, TILL_PORT: '0', TILL_LOG_LEVEL: 'info' } };
}

/**
 * Runs tilld on a pseudo-terminal (util-linux `script`) until it has logged that it listens, then stops it with
 * SIGTERM; whatever happens, the process is killed before this returns. Answers the lines it printed.
 */
async function onTerminal(env: Record<string, string>): Promise<string[]> {
  // The shell says its pid, then becomes tilld (exec): that pid is tilld's, to signal directly.
  const child = execa('script', ['-qfec', `echo "pid:$$"; exec ${process.execPath} ${tilld}`, '/dev/null'], { env, extendEnv: false, reject: false, timeout: 60_000 });
  let screen = '';
  let pid: number | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        screen += chunk.toString();
        pid ??= Number(/pid:(\d+)/.exec(screen)?.[1]) || undefined;
        if (screen.includes('"tilld listening"')) resolve();
      });
      child.once('exit', () => reject(new Error(`tilld exited early: ${screen}`)));
    });
  } finally {
    if (pid) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone already
      }
    }
    const result = await Promise.race([child, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    if (!result) {
      if (pid) process.kill(pid, 'SIGKILL');
      child.kill('SIGKILL');
    }
  }
  return screen
    .split(/\r?\n/)
    .map((line) => line.replace(/\r/g, ''))
    .filter((line) => line !== '' && !line.startsWith('pid:'));
}

describe('tilld on a terminal', () => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.destroy().catch(() => {});
  });

  it('prints one line for a person first, naming the URL and /sign-up when no account exists, then JSON log lines only', async () => {
    const setup = await environment();
    database = setup.database;
    const [first, ...logs] = await onTerminal(setup.env);
    expect(first).toMatch(/^tilld is listening on http:\/\/127\.0\.0\.1:\d+; no account yet: open http:\/\/\S+\/sign-up to create the first one/);
    expect(logs.length).toBeGreaterThan(0);
    for (const line of logs) expect(() => JSON.parse(line), line).not.toThrow();
    expect(logs.some((line) => JSON.parse(line).msg === 'tilld listening')).toBe(true);
  });

  it('sends a person to sign in instead once an account exists', async () => {
    const setup = await environment();
    database = setup.database;
    await execa(process.execPath, [tilld, 'users', 'create', '--email', 'ada@example.com', '--password', 'correct-horse-battery-staple'], { env: setup.env, extendEnv: false });
    const [first] = await onTerminal(setup.env);
    expect(first).toMatch(/^tilld is listening on http:\/\/127\.0\.0\.1:\d+; sign in at http:\/\/\S+\/sign-in/);
    expect(first).not.toContain('/sign-up');
  });

  it('prints JSON lines only off a terminal', async () => {
    const setup = await environment();
    database = setup.database;
    const child = execa(process.execPath, [tilld], { env: setup.env, extendEnv: false, reject: false, timeout: 60_000 });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('"tilld listening"')) resolve();
      });
      child.once('exit', () => reject(new Error(`tilld exited early: ${out}`)));
    });
    child.kill('SIGTERM');
    const result = await child;
    for (const line of result.stdout.split('\n').filter(Boolean)) expect(() => JSON.parse(line), line).not.toThrow();
  });
});
