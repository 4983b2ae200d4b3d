import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * When the first event was ingested for a customer (Polar's Customer.first_user_event_at), kept on the customer as
 * Polar keeps it: ingestion moves it back, and a customer created after events named its external id starts from
 * the earliest of them. Existing customers get theirs from the events already stored.
 */
export const customerFirstUserEvent: Migration = {
  name: '0033_customer_first_user_event',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.alterTable('customers', (table) => {
      timestamp(table as never, 'first_user_event_at').nullable();
    });
    const byId = await db('events').where({ source: 'user' }).whereNotNull('customer_id').groupBy('customer_id').select('customer_id as key').min('timestamp_ms as first');
    for (const row of byId) {
      await db('customers').where({ id: row.key }).update({ first_user_event_at: new Date(Number(row.first)).toISOString() });
    }
    const byExternal = await db('events').where({ source: 'user' }).whereNotNull('external_customer_id').groupBy('organization_id', 'external_customer_id').select('organization_id', 'external_customer_id as key').min('timestamp_ms as first');
    for (const row of byExternal) {
      const at = new Date(Number(row.first)).toISOString();
      await db('customers')
        .where({ organization_id: row.organization_id, external_id: row.key })
        .where((q) => q.whereNull('first_user_event_at').orWhere('first_user_event_at', '>', at))
        .update({ first_user_event_at: at });
    }
  },

  async down(db) {
    await db.schema.alterTable('customers', (table) => {
      table.dropColumn('first_user_event_at');
    });
  },
};
