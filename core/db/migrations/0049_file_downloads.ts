import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Downloads of a downloadables benefit's files, one row per customer, benefit and file with how many times the
 * customer fetched it (Polar's downloadables table): what `benefits.files` counts as downloaders and downloads.
 */
export const fileDownloads: Migration = {
  name: '0049_file_downloads',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('file_downloads', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('benefit_id').notNullable();
      t.text('file_id').notNullable();
      t.text('customer_id').notNullable();
      t.integer('downloads').notNullable().defaultTo(0);
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'last_downloaded_at').notNullable();
      t.unique(['benefit_id', 'file_id', 'customer_id'], { indexName: 'file_downloads_uidx' });
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('file_downloads');
  },
};
