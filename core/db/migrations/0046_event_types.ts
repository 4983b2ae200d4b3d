import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Event types: one per user event name an organization has ingested, with the label the seller gives it (Polar's
 * eventTypes). Made when the names are first listed; the events themselves stay in `events`.
 */
export const eventTypes: Migration = {
  name: '0046_event_types',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('event_types', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('name').notNullable();
      t.text('label').notNullable();
      t.text('label_property_selector').nullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.unique(['organization_id', 'name'], { indexName: 'event_types_name_uidx' });
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('event_types');
  },
};
