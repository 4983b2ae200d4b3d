import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/** Custom fields a checkout asks for (checkbox, date, number, select, text); products attach them. */
export const customFields: Migration = {
  name: '0006_custom_fields',

  async up(db) {
    const { timestamp, json } = columnHelpers(db);
    await db.schema.createTable('custom_fields', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('type').notNullable();
      t.text('slug').notNullable();
      t.text('name').notNullable();
      json(t, 'properties').notNullable();
      json(t, 'metadata').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      timestamp(t, 'deleted_at').nullable();
      // Over deleted fields too, as Polar: a slug is the key of the values stored on orders, so a new
      // field must never inherit an old one's answers.
      t.unique(['organization_id', 'slug'], { indexName: 'custom_fields_slug_uidx' });
      t.index(['organization_id', 'created_at'], 'custom_fields_organization_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('custom_fields');
  },
};
