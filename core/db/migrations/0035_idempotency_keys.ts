import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Idempotency keys of /v1 writes: one row per caller scope and key, claimed by a guarded insert (the primary
 * key makes the claim hold across daemons sharing one PostgreSQL), then holding the first answer for replays.
 */
export const idempotencyKeys: Migration = {
  name: '0035_idempotency_keys',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('idempotency_keys', (t) => {
      t.text('scope').notNullable();
      t.text('key').notNullable();
      t.text('fingerprint').notNullable();
      t.text('method').notNullable();
      t.text('path').notNullable();
      t.text('state').notNullable();
      // Changes at every claim: completions and releases are guarded by it, so a retaken key ignores its old holder.
      t.text('token').notNullable();
      t.integer('status').nullable();
      t.text('response_body').nullable();
      t.bigInteger('locked_at_ms').notNullable();
      t.bigInteger('expires_at_ms').notNullable();
      timestamp(t, 'created_at').notNullable();
      t.primary(['scope', 'key']);
      t.index(['expires_at_ms'], 'idempotency_keys_expires_at_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('idempotency_keys');
  },
};
