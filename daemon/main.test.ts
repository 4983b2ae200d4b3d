import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../core/testing/database.js';

const tilld = join(import.meta.dirname, '..', 'bin', 'tilld');

/** Environment for a real tilld process on a test database of its own. */
async function environment(): Promise<{ env: Record<string, string>; database: TestDatabase }> {
  const database = await createTestDatabase();
  const url = database.config.client === 'postgres' ? database.config.connectionString : database.config.filename;
  // The test's pool is not needed: the process opens its own.
  await database.db.destroy();
  return {
    database,
    env: { TILL_DATA_DIR: mkdtempSync(join(tmpdir(), 'till-main-')), TILL_DATABASE_URL: url, TILL_PORT: '0', TILL_LOG_LEVEL: 'info' },
  };
}

describe('the tilld process', () => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.destroy().catch(() => {});
  });

  it('serves, then stops gracefully on SIGTERM with exit code 0', async () => {
    const setup = await environment();
    database = setup.database;
    const child = execa('node', [tilld], { env: setup.env, reject: false });
    const url = await new Promise<string>((resolve, reject) => {
      let buffered = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        for (const line of buffered.split('\n')) {
          if (line.includes('"tilld listening"')) resolve(JSON.parse(line).url);
        }
      });
      child.once('exit', () => reject(new Error(`tilld exited early: ${buffered}`)));
    });
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('"tilld stopped"');
  });

  it('stops gracefully with exit code 0 on a SIGTERM that arrives while it is still starting', async () => {
    const setup = await environment();
    database = setup.database;
    const child = execa('node', [tilld], { env: setup.env, reject: false });
    // The migrations are logged before tilld listens: the signal arrives mid-start.
    await new Promise<void>((resolve, reject) => {
      let buffered = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        if (buffered.includes('"database migrated"')) resolve();
      });
      child.once('exit', () => reject(new Error(`tilld exited early: ${buffered}`)));
    });
    child.kill('SIGTERM');
    const result = await child;
    expect(result.signal).toBeUndefined();
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('"tilld stopped"');
  });

  it('applies migrations with `tilld migrate` and reports nothing left the second time', async () => {
    const setup = await environment();
    database = setup.database;
    const first = await execa('node', [tilld, 'migrate'], { env: setup.env });
    expect(first.stdout).toMatch(/^applied: 0001_auth/);
    const second = await execa('node', [tilld, 'migrate'], { env: setup.env });
    expect(second.stdout).toBe('database is up to date');
  });

  it('exits 2 with a message naming the variable when the configuration is wrong', async () => {
    const result = await execa('node', [tilld, 'migrate'], { env: { TILL_DATA_DIR: mkdtempSync(join(tmpdir(), 'till-main-')), TILL_PORT: 'nope' }, reject: false });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('TILL_PORT must be a whole number');
  });

  it('exits 2 on an unknown command', async () => {
    const result = await execa('node', [tilld, 'frobnicate'], { reject: false });
    expect(result.exitCode).toBe(2);
  });
});

describe('tilld start-up failures', () => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.destroy().catch(() => {});
  });

  it('exits with a message instead of hanging when its port is taken', async () => {
    const setup = await environment();
    database = setup.database;
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = String((blocker.address() as { port: number }).port);
    try {
      const result = await execa('node', [tilld], { env: { ...setup.env, TILL_PORT: port }, reject: false, timeout: 60_000 });
      expect(result.timedOut).toBe(false);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain('EADDRINUSE');
    } finally {
      blocker.close();
    }
  });
});
