import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { authOptions, createAuth, type AuthSettings } from '../../auth/auth.js';
import { planBetterAuthTables } from '../../auth/schema.js';
import { createTestDatabase, type TestDatabase } from '../../testing/database.js';
import { migrateToLatest, rollbackAll } from '../migrate.js';

const BASE_URL = 'http://127.0.0.1:4010';

function settings(testDb: TestDatabase): AuthSettings {
  return { db: testDb.db, secret: randomBytes(32).toString('hex'), baseUrl: BASE_URL, rateLimit: false };
}

describe('migration 0001_auth', () => {
  let testDb: TestDatabase;

  beforeEach(async () => {
    testDb = await createTestDatabase();
  });

  afterEach(async () => {
    await testDb.destroy();
  });

  it('is applied once by migrateToLatest and not again', async () => {
    expect(await migrateToLatest(testDb.db)).toContain('0001_auth');
    expect(await migrateToLatest(testDb.db)).toEqual([]);
  });

  it('creates every table and column that Till’s Better Auth configuration uses', async () => {
    await migrateToLatest(testDb.db);
    // Captcha adds no table, but include it so an upgrade that gives it one is caught here.
    const options = authOptions({
      ...settings(testDb),
      captcha: { provider: 'cloudflare-turnstile', secretKey: 'unused' },
    });
    for (const table of planBetterAuthTables(options)) {
      const info = await testDb.db.table(table.name).columnInfo();
      const actual = Object.fromEntries(Object.entries(info).map(([name, column]) => [name, column.nullable]));
      const expected = Object.fromEntries([
        ['id', false],
        ...table.columns.map((column) => [column.name, column.nullable]),
      ]);
      expect({ table: table.name, columns: actual }).toEqual({ table: table.name, columns: expected });
    }
  });

  it('enforces the unique lookups Better Auth relies on', async () => {
    await migrateToLatest(testDb.db);
    const now = new Date().toISOString();
    const user = { name: 'A', emailVerified: false, createdAt: now, updatedAt: now };
    await testDb.db('user').insert({ ...user, id: 'u1', email: 'a@example.com' });
    await expect(testDb.db('user').insert({ ...user, id: 'u2', email: 'a@example.com' })).rejects.toThrow();
    const code = { expiresAt: now, status: 'pending' };
    await testDb.db('deviceCode').insert({ ...code, id: 'd1', deviceCode: 'dc1', userCode: 'UC1' });
    await expect(testDb.db('deviceCode').insert({ ...code, id: 'd2', deviceCode: 'dc1', userCode: 'UC2' })).rejects.toThrow();
    await expect(testDb.db('deviceCode').insert({ ...code, id: 'd3', deviceCode: 'dc3', userCode: 'UC1' })).rejects.toThrow();
  });

  it('lets a real Better Auth instance sign a user up and read the session back', async () => {
    await migrateToLatest(testDb.db);
    const auth = createAuth(settings(testDb));

    const signUp = await auth.api.signUpEmail({
      body: { email: 'first@example.com', password: 'correct horse battery staple', name: 'First User' },
    });
    expect(signUp.token).toEqual(expect.any(String));

    const session = await auth.api.getSession({ headers: new Headers({ authorization: `Bearer ${signUp.token}` }) });
    expect(session?.user.email).toBe('first@example.com');
    expect(session?.user.createdAt).toBeInstanceOf(Date);
    expect(session?.user.emailVerified).toBe(false);
    expect(session?.session.userId).toBe(signUp.user.id);
    expect(session?.session.expiresAt.getTime()).toBeGreaterThan(Date.now());
  });

  it('removes every auth table when rolled back', async () => {
    await migrateToLatest(testDb.db);
    await rollbackAll(testDb.db);
    for (const table of ['user', 'session', 'account', 'verification', 'deviceCode', 'organization', 'member']) {
      expect(await testDb.db.schema.hasTable(table)).toBe(false);
    }
  });
});
