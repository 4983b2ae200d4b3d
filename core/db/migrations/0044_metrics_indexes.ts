import type { Migration } from '../migrate.js';
import { dialectOf } from '../database.js';

/**
 * Indexes for /v1/metrics (issue 20: a year by day over 100,000 orders under 100 ms). The orders' organization and
 * date index also carries what the metrics add up (status, currency, product, subscription and the amounts), so a
 * period's orders are read from the index alone; subscriptions are found by when they started (the orders of the
 * subscriptions started in a period are its new-subscription revenue), and a subscription's orders by date.
 */
export const metricsIndexes: Migration = {
  name: '0044_metrics_indexes',

  async up(db) {
    const covered = ['currency', 'status', 'subscription_id', 'product_id', 'net_amount', 'platform_fee_amount', 'refunded_amount'];
    await db.schema.alterTable('orders', (t) => {
      t.dropIndex([], 'orders_organization_created_idx');
      t.dropIndex([], 'orders_subscription_idx');
    });
    if (dialectOf(db) === 'postgres') {
      await db.raw(`create index orders_organization_created_idx on orders (organization_id, created_at) include (${covered.join(', ')})`);
    } else {
      await db.raw(`create index orders_organization_created_idx on orders (organization_id, created_at, ${covered.join(', ')})`);
    }
    await db.schema.alterTable('orders', (t) => t.index(['subscription_id', 'created_at'], 'orders_subscription_idx'));
    await db.schema.alterTable('subscriptions', (t) => t.index(['organization_id', 'started_at'], 'subscriptions_organization_started_idx'));
  },

  async down(db) {
    await db.schema.alterTable('subscriptions', (t) => t.dropIndex([], 'subscriptions_organization_started_idx'));
    await db.schema.alterTable('orders', (t) => {
      t.dropIndex([], 'orders_organization_created_idx');
      t.dropIndex([], 'orders_subscription_idx');
    });
    await db.schema.alterTable('orders', (t) => {
      t.index(['organization_id', 'created_at'], 'orders_organization_created_idx');
      t.index(['subscription_id'], 'orders_subscription_idx');
    });
  },
};
