import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * A customer's change of email address from the portal (Polar's customerPortal email update): the new address
 * waits here until the link mailed to it is followed. Only an HMAC of the link's token is kept. A row is used once;
 * the rows of the last minutes count against the customer's rate limit.
 */
export const customerEmailUpdates: Migration = {
  name: '0045_customer_email_updates',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('customer_email_updates', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('email').notNullable();
      t.text('token_hash').notNullable().unique();
      timestamp(t, 'expires_at').notNullable();
      timestamp(t, 'used_at').nullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['customer_id', 'created_at'], 'customer_email_updates_customer_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('customer_email_updates');
  },
};
