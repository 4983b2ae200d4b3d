import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BetterAuthOptions, DBAdapter } from 'better-auth';
import {
  authFlowTestSuite,
  caseInsensitiveTestSuite,
  joinsTestSuite,
  normalTestSuite,
  numberIdTestSuite,
  testAdapter,
  transactionsTestSuite,
  uuidTestSuite,
} from '@better-auth/test-utils/adapter';
import { dialectOf, type Database } from '../db/database.js';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { knexAdapter } from './knex-adapter.js';
import { createBetterAuthTables } from './schema.js';

/**
 * Better Auth's own adapter conformance suites, run against the knex adapter on the test
 * database: SQLite (better-sqlite3) by default, PostgreSQL when TILL_TEST_DATABASE_URL is set.
 */

/** Drops every table, so a suite that renames models or switches to numeric ids starts clean. */
async function dropAllTables(db: Database): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    const { rows } = await db.raw<{ rows: { tablename: string }[] }>(
      'select tablename from pg_tables where schemaname = current_schema()',
    );
    for (const { tablename } of rows) await db.raw('drop table if exists ?? cascade', [tablename]);
    return;
  }
  const tables = await db('sqlite_master').select<{ name: string }[]>('name').where('type', 'table').andWhereNot('name', 'like', 'sqlite_%');
  // The pool has a single connection, so the pragma covers the drops below.
  await db.raw('PRAGMA foreign_keys = OFF');
  try {
    for (const { name } of tables) await db.schema.dropTableIfExists(name);
  } finally {
    await db.raw('PRAGMA foreign_keys = ON');
  }
}

const suites = () => [
  normalTestSuite(),
  transactionsTestSuite(),
  authFlowTestSuite(),
  caseInsensitiveTestSuite(),
  numberIdTestSuite(),
  joinsTestSuite(),
  uuidTestSuite(),
];

async function runSuites(label: string, open: () => Promise<{ db: Database; destroy(): Promise<void> }>) {
  const { db, destroy } = await open();
  const { execute } = await testAdapter({
    adapter: () => knexAdapter(db, { debugLogs: { isRunningAdapterTests: true } }),
    prefixTests: label,
    async runMigrations(options: BetterAuthOptions) {
      await dropAllTables(db);
      await createBetterAuthTables(db, options);
    },
    tests: suites(),
    onFinish: destroy,
  });
  execute();
}

if (process.env.TILL_TEST_DATABASE_URL) {
  await runSuites('postgres', createTestDatabase);
} else {
  await runSuites('better-sqlite3', createTestDatabase);
}

/** Guarantees Till relies on that Better Auth's suites do not pin down. */
describe('knex adapter guarantees', () => {
  const options = {
    plugins: [
      {
        id: 'till-adapter-test',
        schema: {
          counter: {
            fields: {
              label: { type: 'string' },
              remaining: { type: 'number' },
              flag: { type: 'boolean', required: false },
              at: { type: 'date', required: false },
              big: { type: 'number', bigint: true, required: false },
            },
          },
        },
      },
    ],
  } satisfies BetterAuthOptions;
  type Counter = { id: string; label: string; remaining: number; flag?: boolean | null; at?: Date | null; big?: number | null };

  let testDb: TestDatabase;
  let adapter: DBAdapter<BetterAuthOptions>;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    await createBetterAuthTables(testDb.db, options);
    adapter = knexAdapter(testDb.db)(options);
  });
  afterAll(async () => {
    await testDb?.destroy();
  });
  beforeEach(async () => {
    await adapter.deleteMany({ model: 'counter', where: [] });
  });

  const create = (label: string, remaining = 0) => adapter.create<Omit<Counter, 'id'>, Counter>({ model: 'counter', data: { label, remaining } });
  const labelled = (label: string) => [{ field: 'label', value: label }];

  it('hands a consumed row to exactly one of many concurrent callers', async () => {
    await create('once');
    const results = await Promise.all(Array.from({ length: 10 }, () => adapter.consumeOne<Counter>({ model: 'counter', where: labelled('once') })));
    expect(results.filter((row) => row !== null)).toHaveLength(1);
    expect(await adapter.count({ model: 'counter' })).toBe(0);
  });

  it('consumes only one of several matching rows', async () => {
    await create('twice');
    await create('twice');
    expect(await adapter.consumeOne<Counter>({ model: 'counter', where: labelled('twice') })).toMatchObject({ label: 'twice' });
    expect(await adapter.count({ model: 'counter', where: labelled('twice') })).toBe(1);
  });

  it('never lets concurrent guarded decrements take a counter below zero', async () => {
    const { id } = await create('uses', 3);
    const guard = [...labelled('uses'), { field: 'remaining', operator: 'gt' as const, value: 0 }];
    const results = await Promise.all(
      Array.from({ length: 10 }, () => adapter.incrementOne<Counter>({ model: 'counter', where: guard, increment: { remaining: -1 } })),
    );
    expect(results.filter((row) => row !== null).map((row) => row!.remaining).sort()).toEqual([0, 1, 2]);
    expect(await adapter.findOne<Counter>({ model: 'counter', where: [{ field: 'id', value: id }] })).toMatchObject({ remaining: 0 });
  });

  it('updates one row even when several match', async () => {
    await create('same');
    await create('same');
    const updated = await adapter.update<Counter>({ model: 'counter', where: labelled('same'), update: { remaining: 7 } });
    expect(updated).toMatchObject({ label: 'same', remaining: 7 });
    expect(await adapter.count({ model: 'counter', where: [{ field: 'remaining', value: 7 }] })).toBe(1);
  });

  it('matches % and _ in pattern values literally', async () => {
    for (const label of ['100%', '1000', 'a_b', 'axb', 'star*', 'q?', '[x]']) await create(label);
    const labels = async (operator: 'contains' | 'starts_with' | 'ends_with', value: string) =>
      (await adapter.findMany<Counter>({ model: 'counter', where: [{ field: 'label', operator, value }] })).map((row) => row.label).sort();
    expect(await labels('contains', '%')).toEqual(['100%']);
    expect(await labels('contains', '_')).toEqual(['a_b']);
    expect(await labels('ends_with', '0%')).toEqual(['100%']);
    expect(await labels('starts_with', 'a_')).toEqual(['a_b']);
    expect(await labels('ends_with', '*')).toEqual(['star*']);
    expect(await labels('contains', '?')).toEqual(['q?']);
    expect(await labels('starts_with', '[x')).toEqual(['[x]']);
  });

  it('matches patterns case-sensitively unless asked not to', async () => {
    await create('Hello World');
    const find = (mode: 'sensitive' | 'insensitive') =>
      adapter.findMany<Counter>({ model: 'counter', where: [{ field: 'label', operator: 'contains', value: 'hello', mode }] });
    expect(await find('sensitive')).toHaveLength(0);
    expect(await find('insensitive')).toHaveLength(1);
    expect(await adapter.findOne({ model: 'counter', where: [{ field: 'label', value: 'hello world' }] })).toBeNull();
    expect(await adapter.findOne({ model: 'counter', where: [{ field: 'label', value: 'hello world', mode: 'insensitive' }] })).not.toBeNull();
  });

  it('returns dates, booleans and big numbers with their JavaScript types', async () => {
    const at = new Date('2024-02-29T12:34:56.789Z');
    const { id } = await adapter.create<Omit<Counter, 'id'>, Counter>({
      model: 'counter',
      data: { label: 'typed', remaining: 1, flag: true, at, big: 2 ** 40 },
    });
    const row = await adapter.findOne<Counter>({ model: 'counter', where: [{ field: 'id', value: id }] });
    expect(row).toMatchObject({ flag: true, at, big: 2 ** 40, remaining: 1 });
    expect(row?.at).toBeInstanceOf(Date);
    const later = await adapter.findMany<Counter>({ model: 'counter', where: [{ field: 'at', operator: 'gt', value: new Date('2024-01-01T00:00:00Z') }] });
    expect(later.map((r) => r.id)).toEqual([id]);
    expect(await adapter.count({ model: 'counter', where: [{ field: 'flag', value: true }] })).toBe(1);
  });
});
