import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startSqliteCheckpointer } from './checkpointer.js';
import { createDatabase } from './database.js';

describe('the SQLite checkpointer', () => {
  it('copies committed WAL pages into the database file on its own thread, the writer checkpointing only past 20,000 pages', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'till-checkpointer-'));
    const filename = join(dir, 'till.sqlite');
    const db = createDatabase({ client: 'sqlite', filename });
    try {
      await db.schema.createTable('pages', (t) => {
        t.integer('n').primary();
        t.text('filler').notNullable();
      });
      await db.raw('pragma wal_checkpoint(truncate)');
      const checkpointer = await startSqliteCheckpointer(db);
      expect(Object.values((await db.raw('pragma wal_autocheckpoint'))[0])[0]).toBe(20_000);
      const before = statSync(filename).size;
      // About 2,000 pages: past SQLite's default of 1,000, below the writer's 20,000.
      await db.transaction(async (trx) => {
        for (let n = 0; n < 2000; n++) await trx('pages').insert({ n, filler: 'x'.repeat(3000) });
      });
      // Only a checkpoint writes pages into the database file itself; the commit wrote them to the WAL.
      let after = statSync(filename).size;
      for (let i = 0; i < 100 && after < before + 2000 * 3000; i++) {
        await sleep(50);
        after = statSync(filename).size;
      }
      expect(after).toBeGreaterThanOrEqual(before + 2000 * 3000);
      await checkpointer!.stop();
      expect(await db('pages').count({ n: '*' })).toEqual([{ n: 2000 }]);
    } finally {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is not started for an in-memory database, nor on PostgreSQL', async () => {
    const db = createDatabase({ client: 'sqlite', filename: ':memory:' });
    try {
      expect(await startSqliteCheckpointer(db)).toBeUndefined();
    } finally {
      await db.destroy();
    }
    const pg = createDatabase({ client: 'postgres', connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    try {
      expect(await startSqliteCheckpointer(pg)).toBeUndefined();
    } finally {
      await pg.destroy();
    }
  });
});
