import type { Knex } from 'knex';
import type { Migration } from '../migrate.js';
import { metricsRollups } from './0050_metrics_rollups.js';
import { rebuildMetricsRollups } from '../../metrics/rollups.js';
import { CHECKOUT_KEY, CHECKOUT_VALUES, ORDER_KEY, ORDER_VALUES, SUBSCRIPTION_KEY, SUBSCRIPTION_VALUES } from '../../metrics/rollup-rows.js';

/**
 * The metrics rollups (docs/metrics.md, "Rollups") in their current shape, built from the rows: kept by the writes of
 * orders, subscriptions and checkouts in their own transactions (core/metrics/rollups.ts). Per organization,
 * currency, UTC hour (epoch ms) and product ('' for none):
 *
 * - `metrics_order_hours`: paid orders, their revenue and net revenue, split by one-time, subscription, new
 *   subscription (started in the order's hour), first of its subscription in its hour (`once`); the orders whose
 *   subscription started, or whose previous paid order of the subscription was, in another hour less than 48 hours
 *   away are rows apart, keyed by their kind (subscription, or unstarted: of a subscription never started) and
 *   those hours (-1 otherwise), for the reader to decide per period.
 * - `metrics_subscription_hours`: the changes of the state metrics at the hour they take effect (active and
 *   committed subscriptions, MRR and its committed and trialing variants, customers holding one), and the
 *   subscriptions started, ended, canceled (by reason) in the hour.
 * - `metrics_checkout_hours`: checkouts created, and how many of them succeeded.
 *
 * Replaces 0050's first shape (orders keyed by kind and hours, customers on rows of no product), rebuilt here.
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
const TABLES = ['metrics_order_hours', 'metrics_subscription_hours', 'metrics_checkout_hours'];

export const metricsRollupsSplit: Migration = {
  name: '0051_metrics_rollups_split',

  async up(db) {
    for (const name of TABLES) await db.schema.dropTableIfExists(name);
    await db.schema.createTable('metrics_order_hours', (t) => {
      table(t, ORDER_KEY, ORDER_VALUES);
      // The few rows the reader decides per period (kind '' is every other).
      t.index(['organization_id', 'currency', 'kind', 'hour_ms'], 'metrics_order_hours_kind_idx');
    });
    await db.schema.createTable('metrics_subscription_hours', (t) => table(t, SUBSCRIPTION_KEY, SUBSCRIPTION_VALUES));
    await db.schema.createTable('metrics_checkout_hours', (t) => table(t, CHECKOUT_KEY, CHECKOUT_VALUES));
    await rebuildMetricsRollups(db);
  },

  async down(db) {
    // Back to 0050's first shape, empty (the code of that time built it).
    for (const name of TABLES) await db.schema.dropTableIfExists(name);
    await metricsRollups.up(db);
  },
};
