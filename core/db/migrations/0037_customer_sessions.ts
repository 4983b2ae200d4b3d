import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Customer sessions: a short-lived token that lets one customer of one organization into the customer portal
 * (`/v1/customer-portal/…`). Only the SHA-256 of the token is kept, as for organization access tokens.
 */
export const customerSessions: Migration = {
  name: '0037_customer_sessions',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('customer_sessions', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('token_hash').notNullable().unique();
      t.text('return_url').nullable();
      timestamp(t, 'expires_at').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.index(['customer_id'], 'customer_sessions_customer_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('customer_sessions');
  },
};
