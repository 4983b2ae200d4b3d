import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { read } from './read.js';

describe('read()', () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase();
    await test.db.schema.createTable('read_rows', (t) => {
      t.integer('n').primary();
      t.boolean('even').notNullable();
    });
    await test.db('read_rows').insert([1, 2, 3, 4].map((n) => ({ n, even: n % 2 === 0 })));
  });
  afterAll(async () => {
    await test?.destroy();
  });

  it('answers the rows awaiting the query would, for a select and a first, with boolean bindings', async () => {
    const db = test.db;
    expect(await read(db('read_rows').where('even', true).orderBy('n'))).toEqual(await db('read_rows').where('even', true).orderBy('n'));
    expect(await read(db('read_rows').where('n', '>', 2).orderBy('n').first())).toEqual(await db('read_rows').where('n', '>', 2).orderBy('n').first());
    expect(await read(db('read_rows').where('n', 99).first())).toBeUndefined();
  });

  it('reads inside a transaction on the transaction, seeing its own writes', async () => {
    await test.db.transaction(async (trx) => {
      await trx('read_rows').insert({ n: 10, even: true });
      expect(await read(trx('read_rows').where('n', 10))).toHaveLength(1);
      await trx.rollback();
    }).catch(() => undefined);
    expect(await read(test.db('read_rows').where('n', 10))).toEqual([]);
  });

  it('never reads another transaction\'s uncommitted rows while it holds the connection', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedNow = new Promise<void>((resolve) => (inserted = resolve));
    const transaction = test.db.transaction(async (trx) => {
      await trx('read_rows').insert({ n: 20, even: true });
      inserted();
      await held;
      await trx.rollback();
    }).catch(() => undefined);
    await insertedNow;
    const reading = read<unknown[]>(test.db('read_rows').where('n', 20));
    release();
    expect(await reading).toEqual([]);
    await transaction;
  });

  it.runIf(!process.env.TILL_TEST_DATABASE_URL)('answers at once from the last commit while another transaction holds the connection', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedNow = new Promise<void>((resolve) => (inserted = resolve));
    const transaction = test.db.transaction(async (trx) => {
      await trx('read_rows').insert({ n: 30, even: true });
      inserted();
      await held;
    });
    await insertedNow;
    // The transaction is still open: the read does not wait for it, and sees the rows committed before it.
    expect(await read(test.db('read_rows').whereIn('n', [1, 30]).orderBy('n'))).toEqual([{ n: 1, even: 0 }]);
    release();
    await transaction;
    expect(await read(test.db('read_rows').whereIn('n', [1, 30]).orderBy('n'))).toEqual([{ n: 1, even: 0 }, { n: 30, even: 1 }]);
  });
});
