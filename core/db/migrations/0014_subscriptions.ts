import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Subscriptions and the prices each one bills.
 *
 * Periods are computed from `billing_anchor` plus whole intervals (`cycle` of them), never from the previous
 * period's end, so months of different lengths cannot make renewals drift; `cycle` is -1 during a trial
 * (the anchor is then the trial's end). `dunning_attempts` counts failed
 * renewal charges of the current period (the retry schedule is in core/billing/subscriptions/dunning.ts).
 * `pending_items` holds prorated charges and credits waiting for the next renewal order (proration "prorate").
 */
export const subscriptions: Migration = {
  name: '0014_subscriptions',

  async up(db) {
    const { timestamp, json, amount } = columnHelpers(db);
    await db.schema.createTable('subscriptions', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('product_id').notNullable().references('id').inTable('products');
      t.text('discount_id').nullable().references('id').inTable('discounts');
      // No foreign keys: checkouts and payment methods belong to the checkouts domain, which checks them.
      t.text('checkout_id').nullable();
      t.text('payment_method_id').nullable();
      t.text('status').notNullable();
      amount(t, 'amount').notNullable();
      t.text('currency').notNullable();
      t.text('recurring_interval').notNullable();
      t.integer('recurring_interval_count').notNullable();
      timestamp(t, 'billing_anchor').notNullable();
      t.integer('cycle').notNullable().defaultTo(0);
      timestamp(t, 'current_period_start').notNullable();
      timestamp(t, 'current_period_end').notNullable();
      timestamp(t, 'trial_start').nullable();
      timestamp(t, 'trial_end').nullable();
      t.boolean('cancel_at_period_end').notNullable().defaultTo(false);
      timestamp(t, 'canceled_at').nullable();
      timestamp(t, 'started_at').nullable();
      timestamp(t, 'ends_at').nullable();
      timestamp(t, 'ended_at').nullable();
      timestamp(t, 'past_due_at').nullable();
      t.integer('dunning_attempts').notNullable().defaultTo(0);
      // The order the current charge attempts (and dunning retries) are for; null when nothing is owed.
      t.text('dunning_order_id').nullable();
      // Start of the first period the discount applies to: `once` and `repeating` count from here.
      timestamp(t, 'discount_start').nullable();
      t.text('customer_cancellation_reason').nullable();
      t.text('customer_cancellation_comment').nullable();
      json(t, 'pending_items').notNullable();
      json(t, 'metadata').notNullable();
      json(t, 'custom_field_data').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.index(['organization_id', 'created_at'], 'subscriptions_organization_idx');
      t.index(['customer_id'], 'subscriptions_customer_idx');
      t.index(['product_id'], 'subscriptions_product_idx');
      t.index(['checkout_id'], 'subscriptions_checkout_idx');
    });

    await db.schema.createTable('subscription_prices', (t) => {
      t.text('subscription_id').notNullable().references('id').inTable('subscriptions').onDelete('CASCADE');
      t.text('price_id').notNullable().references('id').inTable('product_prices');
      t.integer('position').notNullable();
      t.primary(['subscription_id', 'price_id']);
      t.index(['price_id'], 'subscription_prices_price_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('subscription_prices');
    await db.schema.dropTableIfExists('subscriptions');
  },
};
