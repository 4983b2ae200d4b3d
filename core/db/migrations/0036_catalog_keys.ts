import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * The stable keys a catalog file (`till plan`, `till apply`, `till pull`) gives an organization's objects:
 * one row per organization, kind and key, naming one object. Keys are the file's, never derived from names.
 */
export const catalogKeys: Migration = {
  name: '0036_catalog_keys',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('catalog_keys', (t) => {
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('kind').notNullable();
      t.text('key').notNullable();
      t.text('object_id').notNullable();
      timestamp(t, 'created_at').notNullable();
      t.primary(['organization_id', 'kind', 'key']);
      t.unique(['organization_id', 'kind', 'object_id'], { indexName: 'catalog_keys_object_uidx' });
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('catalog_keys');
  },
};
