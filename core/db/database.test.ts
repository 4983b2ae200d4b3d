import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { countLoopTurns } from '../testing/loop-turns.js';
import { parseDatabaseUrl, isDatabaseReady } from './database.js';
import { migrateToLatest } from './migrate.js';
import { runEachRowPrepared } from './sql.js';

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

  it.runIf(!!process.env.TILL_TEST_DATABASE_URL)('leaves room on the pages of the rows every ingest updates, for heap-only updates', async () => {
    await migrateToLatest(test.db);
    const { rows } = await test.db.raw("select relname, reloptions from pg_class where relname in ('customer_meter_usage', 'jobs', 'meter_rollups') order by relname");
    expect(rows.map((row: { relname: string; reloptions: string[] | null }) => [row.relname, row.reloptions])).toEqual([
      ['customer_meter_usage', ['fillfactor=25']],
      ['jobs', ['fillfactor=25']],
      ['meter_rollups', ['fillfactor=50']],
    ]);
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

describe.runIf(!process.env.TILL_TEST_DATABASE_URL)('a SQLite connection', () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase();
    await test.db.schema.createTable('cached_statements', (t) => {
      t.integer('n').primary();
    });
    await test.db('cached_statements').insert([1, 2, 3].map((n) => ({ n })));
  });
  afterAll(async () => {
    await test?.destroy();
  });

  interface Statement {
    all(...values: unknown[]): unknown[];
    iterate(...values: unknown[]): IterableIterator<unknown>;
  }
  const connection = async () => {
    const conn = (await test.db.client.acquireConnection()) as { prepare(sql: string): Statement };
    await test.db.client.releaseConnection(conn);
    return conn;
  };

  it("writes a first's limit into its SQL and keeps a page's limit bound, answering the same rows", async () => {
    const first = test.db('cached_statements').where('n', '>', 1).orderBy('n').first().toSQL().toNative();
    expect(first.sql).toMatch(/ limit 1$/);
    expect(first.bindings).toEqual([1]);
    const page = test.db('cached_statements').orderBy('n').limit(2).offset(1).toSQL().toNative();
    expect(page.sql).toMatch(/ limit \? offset \?$/);
    expect(await test.db('cached_statements').where('n', '>', 1).orderBy('n').first()).toEqual({ n: 2 });
    expect(await test.db('cached_statements').orderBy('n').limit(2).offset(1)).toEqual([{ n: 2 }, { n: 3 }]);
  });

  it('prepares a statement once per SQL text and answers each run with its own bindings', async () => {
    const conn = await connection();
    const sql = 'select n from cached_statements where n >= ? order by n';
    expect(conn.prepare(sql)).toBe(conn.prepare(sql));
    expect(conn.prepare(sql).all(2)).toEqual([{ n: 2 }, { n: 3 }]);
    expect(conn.prepare(sql).all(3)).toEqual([{ n: 3 }]);
    expect(await test.db('cached_statements').where('n', '>=', 2).orderBy('n')).toEqual([{ n: 2 }, { n: 3 }]);
    expect(await test.db('cached_statements').where('n', '>=', 1).orderBy('n')).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it('hands out a fresh statement while the cached one is still iterating', async () => {
    const conn = await connection();
    const sql = 'select n from cached_statements order by n';
    const open = conn.prepare(sql).iterate();
    expect(open.next().value).toEqual({ n: 1 });
    const other = conn.prepare(sql);
    expect(other.all()).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect([...open]).toEqual([{ n: 2 }, { n: 3 }]);
    expect(conn.prepare(sql).all()).toHaveLength(3);
  });

  it('keeps answering past the cache size, each distinct SQL text with its own result', async () => {
    for (let i = 0; i < 1200; i++) {
      const [row] = await test.db.raw(`select ${i} as i, count(*) as c from cached_statements`);
      expect(row).toEqual({ i, c: 3 });
    }
  });

  it('lets the event loop turn during a long transaction instead of holding it to the end', async () => {
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    let turnedBeforeCommit = false;
    await test.db.transaction(async (trx) => {
      for (let i = 0; i < 3000 && !turned; i++) await trx('cached_statements').where('n', 1).first();
      turnedBeforeCommit = turned;
    });
    expect(turnedBeforeCommit).toBe(true);
  });

  it('lets the event loop turn between the rows of one prepared run, and writes every row', async () => {
    await test.db.schema.createTable('prepared_rows', (t) => {
      t.integer('n').primary();
    });
    // Loop turns counted while 20,000 rows go through one runEachRowPrepared call (tens of ms of SQLite work):
    // run in one go, as before, no turn could come between its first row and its last.
    const loop = countLoopTurns();
    let turnsDuringRun = 0;
    const changes = await test.db.transaction(async (trx) => {
      const rows = Array.from({ length: 20_000 }, (_, i) => [i]);
      const before = loop.turns;
      const done = await runEachRowPrepared(trx, 'insert into prepared_rows (n) values (?) on conflict do nothing', rows);
      turnsDuringRun = loop.turns - before;
      return done;
    });
    loop.stop();
    expect(turnsDuringRun).toBeGreaterThan(1);
    expect(changes).toHaveLength(20_000);
    expect(changes!.every((changed) => changed === 1)).toBe(true);
    expect((await test.db('prepared_rows').count({ c: '*' }))[0]).toEqual({ c: 20_000 });
  });
});
