import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * What customers are granted for what they bought.
 *
 * `benefit_grants`: one row per (benefit, customer, subscription-or-order), named by `scope`
 * (`subscription:<id>` or `order:<id>`) so granting twice is a no-op. Subscription and order ids are plain
 * indexed columns: the grant outlives neither, but is read without joining their tables.
 *
 * `license_keys` and `license_key_activations`: a key per license-keys grant, validated by (organization, key).
 * The key itself is shown to its customer on every read, so it is stored as issued (the flow does not allow a hash).
 *
 * `meter_credits`: the ledger a meter_credit grant writes (`credited` units, or a `reset` at a cycle without
 * rollover), in `seq` order; metering reads it to compute credited units and balances.
 */
export const benefitGrants: Migration = {
  name: '0016_benefit_grants',

  async up(db) {
    const { timestamp, json, amount } = columnHelpers(db);
    await db.schema.createTable('benefit_grants', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('benefit_id').notNullable().references('id').inTable('benefits').onDelete('CASCADE');
      t.text('subscription_id').nullable();
      t.text('order_id').nullable();
      t.text('scope').notNullable();
      timestamp(t, 'granted_at').nullable();
      timestamp(t, 'revoked_at').nullable();
      json(t, 'properties').notNullable();
      json(t, 'previous_properties').nullable();
      json(t, 'error').nullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.unique(['benefit_id', 'customer_id', 'scope'], { indexName: 'benefit_grants_benefit_customer_scope_uidx' });
      t.index(['organization_id', 'created_at'], 'benefit_grants_organization_created_idx');
      t.index(['customer_id'], 'benefit_grants_customer_idx');
      t.index(['subscription_id'], 'benefit_grants_subscription_idx');
      t.index(['order_id'], 'benefit_grants_order_idx');
    });
    await db.schema.createTable('license_keys', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('benefit_id').notNullable().references('id').inTable('benefits').onDelete('CASCADE');
      t.text('key').notNullable();
      t.text('status').notNullable();
      t.integer('limit_activations').nullable();
      amount(t, 'usage').notNullable();
      amount(t, 'limit_usage').nullable();
      amount(t, 'validations').notNullable();
      timestamp(t, 'last_validated_at').nullable();
      timestamp(t, 'expires_at').nullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.unique(['organization_id', 'key'], { indexName: 'license_keys_organization_key_uidx' });
      t.index(['organization_id', 'created_at'], 'license_keys_organization_created_idx');
      t.index(['benefit_id', 'customer_id'], 'license_keys_benefit_customer_idx');
    });
    await db.schema.createTable('license_key_activations', (t) => {
      t.text('id').primary();
      t.text('license_key_id').notNullable().references('id').inTable('license_keys').onDelete('CASCADE');
      t.text('label').notNullable();
      json(t, 'meta').notNullable();
      json(t, 'conditions').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      timestamp(t, 'deleted_at').nullable();
      t.index(['license_key_id', 'deleted_at'], 'license_key_activations_key_idx');
    });
    await db.schema.createTable('meter_credits', (t) => {
      // seq orders the ledger (a cycle's reset and credit share a timestamp); id is the line's identity.
      t.bigIncrements('seq').primary();
      t.text('id').notNullable().unique();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('meter_id').notNullable();
      t.text('benefit_grant_id').notNullable().references('id').inTable('benefit_grants').onDelete('CASCADE');
      // 'credited' adds `units`; 'reset' starts a new period (consumption and credits before it no longer count).
      t.text('kind').notNullable();
      amount(t, 'units').notNullable();
      t.boolean('rollover').notNullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['organization_id', 'customer_id', 'meter_id', 'created_at'], 'meter_credits_customer_meter_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('meter_credits');
    await db.schema.dropTableIfExists('license_key_activations');
    await db.schema.dropTableIfExists('license_keys');
    await db.schema.dropTableIfExists('benefit_grants');
  },
};
