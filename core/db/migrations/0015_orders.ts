import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Orders (one per paid checkout and per subscription renewal), their line items, the refunds made against
 * them, and each organization's invoice-number counter.
 *
 * Amounts are integer minor units in the order's currency. `refunded_amount` / `refunded_tax_amount` are the
 * running totals that a refund claims through a guarded update (`refunded_amount + x <= refundable`), so
 * concurrent refunds cannot exceed what was paid. Customers, products, discounts, subscriptions, checkouts and
 * payments are referenced without foreign keys where those tables belong to other domains or later migrations;
 * the services check existence before writing.
 */
export const orders: Migration = {
  name: '0015_orders',

  async up(db) {
    const { timestamp, json, amount } = columnHelpers(db);
    await db.schema.createTable('orders', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable();
      t.text('product_id').nullable();
      t.text('subscription_id').nullable();
      t.text('checkout_id').nullable();
      t.text('discount_id').nullable();
      t.text('payment_id').nullable();
      t.text('status').notNullable();
      t.text('billing_reason').notNullable();
      t.text('currency').notNullable();
      amount(t, 'subtotal_amount').notNullable();
      amount(t, 'discount_amount').notNullable();
      amount(t, 'net_amount').notNullable();
      amount(t, 'tax_amount').notNullable();
      amount(t, 'total_amount').notNullable();
      amount(t, 'applied_balance_amount').notNullable();
      amount(t, 'refunded_amount').notNullable();
      amount(t, 'refunded_tax_amount').notNullable();
      amount(t, 'platform_fee_amount').notNullable();
      t.text('billing_name').nullable();
      json(t, 'billing_address').nullable();
      t.text('invoice_number').notNullable();
      t.boolean('is_invoice_generated').notNullable();
      json(t, 'metadata').notNullable();
      json(t, 'custom_field_data').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.index(['organization_id', 'created_at'], 'orders_organization_created_idx');
      t.index(['customer_id'], 'orders_customer_idx');
      t.index(['subscription_id'], 'orders_subscription_idx');
      t.index(['checkout_id'], 'orders_checkout_idx');
      t.unique(['organization_id', 'invoice_number'], { indexName: 'orders_invoice_number_uidx' });
    });

    await db.schema.createTable('order_items', (t) => {
      t.text('id').primary();
      t.text('order_id').notNullable().references('id').inTable('orders').onDelete('CASCADE');
      t.text('label').notNullable();
      amount(t, 'amount').notNullable();
      amount(t, 'tax_amount').notNullable();
      t.boolean('proration').notNullable();
      t.text('product_price_id').nullable();
      t.integer('position').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.index(['order_id', 'position'], 'order_items_order_idx');
    });

    await db.schema.createTable('refunds', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('order_id').notNullable().references('id').inTable('orders').onDelete('CASCADE');
      t.text('subscription_id').nullable();
      t.text('customer_id').notNullable();
      t.text('payment_id').nullable();
      t.text('status').notNullable();
      t.text('reason').notNullable();
      amount(t, 'amount').notNullable();
      amount(t, 'tax_amount').notNullable();
      t.text('currency').notNullable();
      t.text('comment').nullable();
      t.boolean('revoke_benefits').notNullable();
      t.text('processor_refund_id').nullable();
      t.text('failure_reason').nullable();
      json(t, 'metadata').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.index(['organization_id', 'created_at'], 'refunds_organization_created_idx');
      t.index(['order_id'], 'refunds_order_idx');
    });

    // One row per organization: the last invoice number handed out (claimed by a guarded increment).
    await db.schema.createTable('invoice_counters', (t) => {
      t.text('organization_id').primary().references('id').inTable('organization').onDelete('CASCADE');
      t.integer('last_number').notNullable();
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('invoice_counters');
    await db.schema.dropTableIfExists('refunds');
    await db.schema.dropTableIfExists('order_items');
    await db.schema.dropTableIfExists('orders');
  },
};
