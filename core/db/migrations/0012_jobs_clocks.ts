import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Time-driven work and the organizations' clocks.
 *
 * `jobs` holds one row per pending piece of time-driven work (a renewal, a dunning retry, a checkout's expiry…),
 * keyed by (kind, subject_id) so rescheduling replaces. Times are epoch milliseconds in bigints so that "due"
 * compares the same way on both dialects and can add an organization's clock offset in SQL.
 *
 * `organization_clocks` marks an organization as sandbox and holds how far its test clock runs ahead of real time.
 */
export const jobsAndClocks: Migration = {
  name: '0012_jobs_clocks',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('organization_clocks', (t) => {
      t.text('organization_id').primary().references('id').inTable('organization').onDelete('CASCADE');
      t.boolean('sandbox').notNullable();
      t.bigInteger('offset_ms').notNullable();
      timestamp(t, 'modified_at').notNullable();
    });
    await db.schema.createTable('jobs', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('kind').notNullable();
      t.text('subject_id').notNullable();
      t.bigInteger('run_at_ms').notNullable();
      t.integer('attempts').notNullable();
      t.text('locked_by').nullable();
      t.bigInteger('locked_until_ms').nullable();
      t.text('last_error').nullable();
      timestamp(t, 'created_at').notNullable();
      t.unique(['kind', 'subject_id'], { indexName: 'jobs_kind_subject_uidx' });
      t.index(['run_at_ms'], 'jobs_run_at_idx');
      t.index(['organization_id', 'run_at_ms'], 'jobs_organization_run_at_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('jobs');
    await db.schema.dropTableIfExists('organization_clocks');
  },
};
