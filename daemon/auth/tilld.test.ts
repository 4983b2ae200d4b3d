import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../core/testing/database.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { main } from '../main.js';
import { startDaemon } from '../server.js';
import { signIn, TEST_PASSWORD, uniqueEmail } from '../testing/auth-client.js';

// `tilld users create` runs in-process through main(argv, env), the function bin/tilld calls,
// against a test database of its own; the daemon is then started on that same database.

let database: TestDatabase;
let env: Record<string, string>;
let out: string[];
let err: string[];

beforeEach(async () => {
  database = await createTestDatabase();
  const url = database.config.client === 'postgres' ? database.config.connectionString : database.config.filename;
  env = {
    TILL_DATA_DIR: mkdtempSync(join(tmpdir(), 'till-users-')),
    TILL_DATABASE_URL: url,
    TILL_SECRET: 'users-test-secret-users-test-secret-0123',
    TILL_PORT: '0',
  };
  out = [];
  err = [];
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void out.push(args.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void err.push(args.join(' ')));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await database.destroy().catch(() => {});
});

const usersCreate = (...args: string[]) => main(['users', 'create', ...args], env);

describe('tilld users create', () => {
  it('creates the first account as an admin, and later ones as users', async () => {
    const first = uniqueEmail('first');
    const second = uniqueEmail('second');
    expect(await usersCreate('--email', first, '--password', TEST_PASSWORD)).toBe(0);
    expect(await usersCreate('--email', second, '--password', TEST_PASSWORD)).toBe(0);
    expect(out[0]).toMatch(new RegExp(`^created ${first} \\(admin\\) id=\\S+$`));
    expect(out[1]).toMatch(new RegExp(`^created ${second} \\(user\\) id=\\S+$`));
  });

  it('makes a later account an admin with --admin, and prints JSON with --json', async () => {
    await usersCreate('--email', uniqueEmail(), '--password', TEST_PASSWORD);
    const email = uniqueEmail('ops');
    expect(await usersCreate('--email', email, '--password', TEST_PASSWORD, '--admin', '--json', '--name', 'Ops')).toBe(0);
    expect(JSON.parse(out[1]!)).toMatchObject({ email, name: 'Ops', role: 'admin' });
  });

  it('stores the email lowercased', async () => {
    const email = uniqueEmail('mixed');
    await usersCreate('--email', `  ${email.toUpperCase()} `, '--password', TEST_PASSWORD, '--json');
    expect(JSON.parse(out[0]!).email).toBe(email);
  });

  it('refuses a duplicate email with a non-zero exit and a clear message', async () => {
    const email = uniqueEmail('dup');
    await usersCreate('--email', email, '--password', TEST_PASSWORD);
    const code = await usersCreate('--email', email, '--password', 'another long password');
    expect(code).not.toBe(0);
    expect(err.join('\n')).toBe(`tilld: An account with ${email} already exists`);
  });

  it('refuses a password shorter than 8 characters and an invalid email', async () => {
    expect(await usersCreate('--email', uniqueEmail(), '--password', 'short')).not.toBe(0);
    expect(await usersCreate('--email', 'not-an-email', '--password', TEST_PASSWORD)).not.toBe(0);
    expect(err).toEqual(['tilld: Password too short: use at least 8 characters', 'tilld: Invalid email: not-an-email']);
  });

  it('makes an account that signs in over HTTP with its role', async () => {
    const email = uniqueEmail('headless');
    await usersCreate('--email', email, '--password', TEST_PASSWORD);
    const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
    const daemon = await startDaemon(loadConfig(env), createLogger('error', quiet));
    try {
      const session = await signIn(daemon.url, email);
      expect(session.user).toMatchObject({ email, role: 'admin' });
    } finally {
      await daemon.stop();
    }
  });
});
