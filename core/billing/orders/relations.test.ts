import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../testing/database.js';
import { loadRelations } from './relations.js';
import type { StoredOrder } from './schema.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ migrated: true });
});
afterAll(async () => {
  await database?.destroy();
});

/** An order naming one of each relation (none of them exist: the queries run all the same). */
const order = { organizationId: 'org_x', customerId: 'cus_x', productId: 'prod_x', subscriptionId: 'sub_x', discountId: 'disc_x' } as StoredOrder;

describe('loading what orders embed', () => {
  it('inside a transaction, sends one query at a time on its connection (pg refuses overlapping queries from pg 9)', async () => {
    // On SQLite knex serializes a transaction's queries itself; the overlap is PostgreSQL's to refuse.
    let overlapped = 0;
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client & { _activeQuery?: unknown; queryQueue?: unknown[] }, ...args: unknown[]) {
      // What pg checks before it warns: a query already running or waiting on this client.
      if (this._activeQuery || this.queryQueue?.length) overlapped++;
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    try {
      const relations = await database.db.transaction((trx) => loadRelations(trx, [order]));
      expect(relations.customers.size + relations.products.size + relations.organizations.size).toBe(0);
      // The pool, outside a transaction, may use several connections at once.
      await loadRelations(database.db, [order]);
    } finally {
      pg.Client.prototype.query = original;
    }
    expect(overlapped).toBe(0);
  });
});
