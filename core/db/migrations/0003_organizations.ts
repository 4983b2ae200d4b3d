import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * The billing side of an organization (Better Auth's `organization` row holds name, slug and logo),
 * and organization access tokens for CI and servers.
 */
export const organizations: Migration = {
  name: '0003_organizations',

  async up(db) {
    const { timestamp, json } = columnHelpers(db);
    await db.schema.createTable('organization_settings', (t) => {
      t.text('organization_id').primary().references('id').inTable('organization').onDelete('CASCADE');
      t.text('email').nullable();
      t.text('website').nullable();
      json(t, 'socials').notNullable();
      timestamp(t, 'details_submitted_at').nullable();
      json(t, 'feature_settings').notNullable();
      json(t, 'subscription_settings').notNullable();
      json(t, 'notification_settings').notNullable();
      json(t, 'customer_email_settings').notNullable();
      json(t, 'customer_portal_settings').notNullable();
      t.text('default_presentment_currency').notNullable();
      t.text('default_tax_behavior').notNullable();
      t.text('country').nullable();
      timestamp(t, 'modified_at').nullable();
    });

    await db.schema.createTable('organization_access_tokens', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('comment').notNullable();
      json(t, 'scopes').notNullable();
      // SHA-256 of the token: the token itself is shown once and never stored.
      t.text('token_hash').notNullable().unique();
      t.text('created_by_user_id').nullable().references('id').inTable('user').onDelete('SET NULL');
      timestamp(t, 'expires_at').nullable();
      timestamp(t, 'last_used_at').nullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      timestamp(t, 'deleted_at').nullable();
      t.index(['organization_id', 'created_at'], 'organization_access_tokens_organization_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('organization_access_tokens');
    await db.schema.dropTableIfExists('organization_settings');
  },
};
