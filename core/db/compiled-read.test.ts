import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { compiledRead } from './compiled-read.js';

describe('compiledRead()', () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase();
    await test.db.schema.createTable('compiled_rows', (t) => {
      t.integer('n').primary();
      t.string('name').notNullable();
      t.boolean('even').notNullable();
      t.string('tag').nullable();
    });
    await test.db('compiled_rows').insert([1, 2, 3, 4, 5].map((n) => ({ n, name: `Row ${n}`, even: n % 2 === 0, tag: n > 3 ? null : 'low' })));
  });
  afterAll(async () => {
    await test?.destroy();
  });

  const byNames = compiledRead<Record<string, unknown>[], [readonly string[], string | null]>((db, names, tag) =>
    db('compiled_rows').whereIn('name', names).where({ tag }).where('even', false).orderBy('n'),
  );

  it('answers what the query built each time answers, whatever the lists\' lengths and the nulls', async () => {
    const db = test.db;
    for (const names of [[], ['Row 1'], ['Row 1', 'Row 3'], ['Row 5', 'Row 1', 'Row 3', 'Row 4']]) {
      for (const tag of ['low', null]) {
        const expected = await db('compiled_rows').whereIn('name', names).where({ tag }).where('even', false).orderBy('n');
        expect(await byNames(db, names, tag)).toEqual(expected);
        // Again: the second call runs the SQL compiled by the first.
        expect(await byNames(db, names, tag)).toEqual(expected);
      }
    }
  });

  it.runIf(!process.env.TILL_TEST_DATABASE_URL)('builds the query with knex once per shape of the arguments on SQLite', async () => {
    let builds = 0;
    const counted = compiledRead<Record<string, unknown>[], [readonly number[]]>((db, ns) => {
      builds++;
      return db('compiled_rows').whereIn('n', ns).orderBy('n');
    });
    expect(await counted(test.db, [1, 2])).toHaveLength(2);
    expect(await counted(test.db, [3, 4])).toEqual(await test.db('compiled_rows').whereIn('n', [3, 4]).orderBy('n'));
    expect(builds).toBe(1);
    expect(await counted(test.db, [5])).toHaveLength(1);
    expect(builds).toBe(2);
  });

  it.runIf(!process.env.TILL_TEST_DATABASE_URL)('builds once a query that binds one list in each part of a union', async () => {
    let builds = 0;
    const union = compiledRead<Record<string, unknown>[], [readonly number[]]>((db, ns) => {
      builds++;
      return db('compiled_rows').whereIn('n', ns).where('even', true).select('n').unionAll([db('compiled_rows').whereIn('n', ns).where('even', false).select('n')]).orderBy('n');
    });
    expect(await union(test.db, [1, 2])).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await union(test.db, [4, 5])).toEqual([{ n: 4 }, { n: 5 }]);
    expect(builds).toBe(1);
  });

  it('answers one row or none for a first', async () => {
    const one = compiledRead<Record<string, unknown> | undefined, [number]>((db, n) => db('compiled_rows').where({ n }).first());
    expect(await one(test.db, 2)).toEqual(await test.db('compiled_rows').where({ n: 2 }).first());
    expect(await one(test.db, 3)).toEqual(await test.db('compiled_rows').where({ n: 3 }).first());
    expect(await one(test.db, 99)).toBeUndefined();
  });

  it.runIf(!process.env.TILL_TEST_DATABASE_URL)('writes a constant limit (a first\'s) into the SQL it runs on SQLite, and answers the same', async () => {
    const connection = (test.db.client as { pool: { free: { resource: { prepare(sql: string): unknown } }[] } }).pool.free[0]!.resource;
    const prepare = connection.prepare;
    const prepared: string[] = [];
    connection.prepare = function (this: unknown, sql: string) {
      prepared.push(sql);
      return prepare.call(this, sql);
    };
    try {
      const one = compiledRead<Record<string, unknown> | undefined, [string]>((db, name) => db('compiled_rows').where({ name }).first());
      for (const name of ['Row 1', 'Row 4', 'Row 9']) expect(await one(test.db, name)).toEqual(await test.db('compiled_rows').where({ name }).first());
      const two = compiledRead<Record<string, unknown>[], [string]>((db, tag) => db('compiled_rows').where({ tag }).orderBy('n').limit(2));
      expect(await two(test.db, 'low')).toEqual(await test.db('compiled_rows').where({ tag: 'low' }).orderBy('n').limit(2));
    } finally {
      connection.prepare = prepare;
    }
    expect(prepared).toContain('select * from `compiled_rows` where `name` = ? limit 1');
    expect(prepared).toContain('select * from `compiled_rows` where `tag` = ? order by `n` asc limit 2');
  });

  it('still answers right when the build computes with an argument instead of passing it on', async () => {
    const lowered = compiledRead<Record<string, unknown>[], [string]>((db, name) => db('compiled_rows').where('name', `Row ${name.trim()}`));
    expect(await lowered(test.db, ' 2 ')).toEqual(await test.db('compiled_rows').where('name', 'Row 2'));
    expect(await lowered(test.db, '4')).toEqual(await test.db('compiled_rows').where('name', 'Row 4'));
    const limited = compiledRead<Record<string, unknown>[], [number]>((db, count) => db('compiled_rows').orderBy('n').limit(count));
    expect(await limited(test.db, 2)).toHaveLength(2);
    expect(await limited(test.db, 3)).toHaveLength(3);
  });

  it('reads inside a transaction on the transaction, seeing its own writes', async () => {
    const one = compiledRead<Record<string, unknown>[], [number]>((db, n) => db('compiled_rows').where({ n }));
    expect(await one(test.db, 10)).toEqual([]);
    await test.db
      .transaction(async (trx) => {
        await trx('compiled_rows').insert({ n: 10, name: 'Row 10', even: true });
        expect(await one(trx, 10)).toHaveLength(1);
        await trx.rollback();
      })
      .catch(() => undefined);
    expect(await one(test.db, 10)).toEqual([]);
  });
});
