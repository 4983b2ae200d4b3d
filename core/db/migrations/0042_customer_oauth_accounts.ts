import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Customers' connected accounts (GitHub, Discord), which Discord and GitHub benefits grant access to, and the
 * short-lived states of the OAuth connections under way. Tokens kept for later calls (Discord's, to add the member
 * to a guild) are sealed with a key derived from the daemon's secret; a state is kept as its SHA-256 only.
 */
export const customerOAuthAccounts: Migration = {
  name: '0042_customer_oauth_accounts',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('customer_oauth_accounts', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('platform').notNullable();
      t.text('account_id').notNullable();
      t.text('account_username').nullable();
      t.text('access_token').nullable();
      t.text('refresh_token').nullable();
      timestamp(t, 'access_token_expires_at').nullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.unique(['customer_id', 'platform', 'account_id'], { indexName: 'customer_oauth_accounts_account_key' });
    });
    await db.schema.createTable('oauth_connect_states', (t) => {
      t.text('id').primary();
      t.text('state_hash').notNullable().unique();
      t.text('browser_hash').notNullable();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('customer_session_id').nullable();
      t.text('grant_id').notNullable();
      t.text('platform').notNullable();
      t.text('return_to').notNullable();
      timestamp(t, 'expires_at').notNullable();
      timestamp(t, 'used_at').nullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['customer_id'], 'oauth_connect_states_customer_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('oauth_connect_states');
    await db.schema.dropTableIfExists('customer_oauth_accounts');
  },
};
