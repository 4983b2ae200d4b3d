import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { parseDatabaseUrl, isDatabaseReady } from './database.js';
import { migrateToLatest } from './migrate.js';

describe('parseDatabaseUrl', () => {
  it('reads postgres:// and postgresql:// URLs as PostgreSQL and anything else as a SQLite path', () => {
    expect(parseDatabaseUrl('postgres://u@h/db')).toEqual({ client: 'postgres', connectionString: 'postgres://u@h/db' });
    expect(parseDatabaseUrl('postgresql://u@h/db').client).toBe('postgres');
    expect(parseDatabaseUrl('/var/lib/till/till.sqlite')).toEqual({ client: 'sqlite', filename: '/var/lib/till/till.sqlite' });
    expect(parseDatabaseUrl('sqlite:///tmp/x.sqlite')).toEqual({ client: 'sqlite', filename: '/tmp/x.sqlite' });
  });
});

describe('the database', () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase();
  });
  afterAll(async () => {
    await test?.destroy();
  });

  it('answers readiness checks', async () => {
    expect(await isDatabaseReady(test.db)).toBe(true);
  });

  it('applies the migration history once, then has nothing left to apply', async () => {
    const first = await migrateToLatest(test.db);
    expect(first.length).toBeGreaterThan(0);
    expect(await migrateToLatest(test.db)).toEqual([]);
  });

  it.runIf(!process.env.TILL_TEST_DATABASE_URL)('runs SQLite in WAL mode with foreign keys on and a busy timeout', async () => {
    const journal = await test.db.raw('PRAGMA journal_mode');
    const foreignKeys = await test.db.raw('PRAGMA foreign_keys');
    const busy = await test.db.raw('PRAGMA busy_timeout');
    expect(Object.values(journal[0])[0]).toBe('wal');
    expect(Object.values(foreignKeys[0])[0]).toBe(1);
    expect(Number(Object.values(busy[0])[0])).toBeGreaterThanOrEqual(1000);
  });
});
