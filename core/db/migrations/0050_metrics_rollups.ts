import type { Knex } from 'knex';
import type { Migration } from '../migrate.js';
import { rebuildMetricsRollups } from '../../metrics/rollups.js';
import { ORDER_KEY, ORDER_VALUES, CHECKOUT_KEY, CHECKOUT_VALUES, SUBSCRIPTION_KEY, SUBSCRIPTION_VALUES } from '../../metrics/rollup-rows.js';

/**
 * Hourly rollups of what /v1/metrics counts (issue 20: a year by day under 100 ms), kept by the writes of orders,
 * subscriptions and checkouts in their own transactions (core/metrics/rollups.ts) and built here from the rows
 * that exist. Per organization, currency, UTC hour (epoch ms) and product ('' for none):
 *
 * - `metrics_order_hours`: paid orders, their revenue and net revenue, also keyed by kind (one_time,
 *   subscription, unstarted: of a subscription never started), the hour its subscription started and the hour of
 *   its subscription's previous paid order (each -1 when none or further than 48 hours).
 * - `metrics_subscription_hours`: the changes of the state metrics at the hour they take effect (active and
 *   committed subscriptions, MRR and its committed and trialing variants, customers holding one), and the
 *   subscriptions started, ended, canceled (by reason) in the hour.
 * - `metrics_checkout_hours`: checkouts created, and how many of them succeeded.
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

export const metricsRollups: Migration = {
  name: '0050_metrics_rollups',

  async up(db) {
    await db.schema.createTable('metrics_order_hours', (t) => table(t, ORDER_KEY, ORDER_VALUES));
    await db.schema.createTable('metrics_subscription_hours', (t) => table(t, SUBSCRIPTION_KEY, SUBSCRIPTION_VALUES));
    await db.schema.createTable('metrics_checkout_hours', (t) => table(t, CHECKOUT_KEY, CHECKOUT_VALUES));
    await rebuildMetricsRollups(db);
  },

  async down(db) {
    await db.schema.dropTableIfExists('metrics_checkout_hours');
    await db.schema.dropTableIfExists('metrics_subscription_hours');
    await db.schema.dropTableIfExists('metrics_order_hours');
  },
};
