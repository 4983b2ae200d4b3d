import type { Knex } from 'knex';
import type { Migration } from '../migrate.js';

/**
 * Hourly rollups of what /v1/metrics counts (issue 20: a year by day under 100 ms), first shape. Migration 0051
 * replaces the tables with their current shape and builds them from the rows (docs/metrics.md, "Rollups"); this
 * one only creates the first shape, which databases migrated before 0051 hold (and built then).
 */
const table = (t: Knex.CreateTableBuilder, keys: readonly string[], values: readonly string[]) => {
  for (const key of keys) {
    if (key.endsWith('_ms')) t.bigInteger(key).notNullable();
    else if (key === 'organization_id') t.text(key).notNullable().references('id').inTable('organization').onDelete('CASCADE');
    else t.text(key).notNullable();
  }
  for (const value of values) t.bigInteger(value).notNullable().defaultTo(0);
  t.primary([...keys]);
};
const REASONS = ['customer_service', 'low_quality', 'missing_features', 'switched_service', 'too_complex', 'too_expensive', 'unused', 'other'];

export const metricsRollups: Migration = {
  name: '0050_metrics_rollups',

  async up(db) {
    const hour = ['organization_id', 'currency', 'hour_ms', 'product_id'];
    await db.schema.createTable('metrics_order_hours', (t) => table(t, [...hour, 'kind', 'start_hour_ms', 'prev_hour_ms'], ['orders', 'revenue', 'net_revenue']));
    const state = ['active', 'committed', 'mrr', 'committed_mrr', 'trial_mrr', 'trial_committed_mrr', 'customers', 'new_subscriptions', 'churned', 'starts_incl', 'ends_incl'];
    await db.schema.createTable('metrics_subscription_hours', (t) => table(t, hour, [...state, ...REASONS.map((reason) => `canceled_${reason}`)]));
    await db.schema.createTable('metrics_checkout_hours', (t) => table(t, hour, ['checkouts', 'succeeded']));
  },

  async down(db) {
    await db.schema.dropTableIfExists('metrics_checkout_hours');
    await db.schema.dropTableIfExists('metrics_subscription_hours');
    await db.schema.dropTableIfExists('metrics_order_hours');
  },
};
