import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/** The webhook outbox: every event, written in the transaction of the change it reports. */
export const outbox: Migration = {
  name: '0002_outbox',

  async up(db) {
    const { timestamp, json } = columnHelpers(db);
    await db.schema.createTable('webhook_events', (t) => {
      // seq orders events that share a timestamp; id is the event's public identity.
      t.bigIncrements('seq').primary();
      t.text('id').notNullable().unique();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('type').notNullable();
      json(t, 'payload').notNullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['organization_id', 'created_at'], 'webhook_events_organization_created_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('webhook_events');
  },
};
