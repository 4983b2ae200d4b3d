import { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { until } from '../../daemon/testing/poll.js';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { PIPELINE_APPLICATION_NAME, PIPELINE_CONNECTIONS } from './pipeline.js';
import { preparedRowsOnPostgres } from './sql.js';

const onPostgres = !!process.env.TILL_TEST_DATABASE_URL;

describe.runIf(onPostgres)('pipelined reads on PostgreSQL (preparedRowsOnPostgres outside a transaction)', () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase();
  });
  afterAll(async () => {
    await test?.destroy();
  });

  const square = (n: unknown) => preparedRowsOnPostgres(test.db, 'till_test_square', 'select ?::int * ?::int as n, ?::text as tag', [n as number, n as number, `t${n}`]);
  /** The backends of this database serving the pipelined reads. */
  const pipelined = async () =>
    (await test.db.raw('select pid from pg_stat_activity where datname = current_database() and application_name = ?', [PIPELINE_APPLICATION_NAME])).rows as { pid: number }[];

  it('answers every read begun in one turn with its own rows, sent in one socket write', async () => {
    // Each connection opened and the statement prepared on it: one read a turn goes to each in turn.
    for (let i = 0; i < PIPELINE_CONNECTIONS; i++) await square(1);
    const writes = vi.spyOn(Socket.prototype as unknown as { _writev(...args: unknown[]): unknown }, '_writev');
    try {
      const answers = await Promise.all([2, 3, 4, 5, 6, 7, 8, 9].map(square));
      expect(answers).toEqual([2, 3, 4, 5, 6, 7, 8, 9].map((n) => [{ n: n * n, tag: `t${n}` }]));
      expect(writes.mock.calls.map((c) => (c[0] as unknown[]).length)).toEqual([32]);
    } finally {
      writes.mockRestore();
    }
    expect((await pipelined()).length).toBeLessThanOrEqual(PIPELINE_CONNECTIONS);
  });

  it('fails one read on its own error and answers the others of its turn', async () => {
    const answers = await Promise.allSettled([square(2), square('not a number'), square(3)]);
    expect(answers[0]).toEqual({ status: 'fulfilled', value: [{ n: 4, tag: 't2' }] });
    expect(answers[1]).toMatchObject({ status: 'rejected', reason: { code: '22P02' } });
    expect(answers[2]).toEqual({ status: 'fulfilled', value: [{ n: 9, tag: 't3' }] });
  });

  it('answers reads after PostgreSQL ended the pipelined connections, on new ones', async () => {
    await Promise.all([square(1), square(2)]);
    const before = (await pipelined()).map((b) => b.pid);
    expect(before.length).toBeGreaterThan(0);
    await test.db.raw(`select pg_terminate_backend(pid) from pg_stat_activity where pid in (${before.map(() => '?').join(', ')})`, before);
    // Every read answers right, whether its connection had noticed the end yet (then it opens a new one) or not
    // (the pool answers it); the ended backends are replaced.
    for (let n = 3; n < 9; n++) expect(await square(n)).toEqual([{ n: n * n, tag: `t${n}` }]);
    await until(
      async () => {
        await square(1);
        return (await pipelined()).map((b) => b.pid);
      },
      (pids) => pids.length > 0 && pids.every((pid) => !before.includes(pid)),
      'new pipelined connections',
    );
  });

  it('reads in a transaction through the transaction, not the pipelined connections', async () => {
    await test.db.transaction(async (trx) => {
      const [{ pid }] = (await trx.raw('select pg_backend_pid() as pid')).rows;
      expect(await preparedRowsOnPostgres(trx, 'till_test_pid', 'select pg_backend_pid() as pid, ?::int as n', [1])).toEqual([{ pid, n: 1 }]);
    });
  });

  it('ends the pipelined connections with the database', async () => {
    const other = await createTestDatabase();
    const name = (await other.db.raw('select current_database() as name')).rows[0].name as string;
    await preparedRowsOnPostgres(other.db, 'till_test_one', 'select ?::int as n', [1]);
    const count = async () => Number((await test.db.raw('select count(*) as n from pg_stat_activity where datname = ? and application_name = ?', [name, PIPELINE_APPLICATION_NAME])).rows[0].n);
    expect(await count()).toBe(1);
    await other.db.destroy();
    await until(count, (n) => n === 0, 'no pipelined connection left');
    await other.destroy();
  });
});
