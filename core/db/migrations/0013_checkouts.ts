import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Checkouts and what paying one leaves behind: payment methods saved for renewals (brand and last four only,
 * never a card number), payments (succeeded or failed, with the processor's id and decline code), and the
 * organizations' tax rates.
 */
export const checkouts: Migration = {
  name: '0013_checkouts',

  async up(db) {
    const { timestamp, json, amount } = columnHelpers(db);

    await db.schema.createTable('tax_rates', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('country').notNullable();
      // '' is the country-wide rate, so the unique index treats it as a value (NULLs never collide).
      t.text('state_key').notNullable();
      t.integer('basis_points').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.unique(['organization_id', 'country', 'state_key'], { indexName: 'tax_rates_place_uidx' });
    });

    await db.schema.createTable('payment_methods', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('processor').notNullable();
      t.text('processor_method_id').notNullable();
      t.text('brand').notNullable();
      t.text('last4').notNullable();
      t.integer('exp_month').nullable();
      t.integer('exp_year').nullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['customer_id'], 'payment_methods_customer_idx');
    });

    await db.schema.createTable('checkouts', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('status').notNullable();
      t.text('client_secret').notNullable().unique('checkouts_client_secret_uidx');
      timestamp(t, 'expires_at').notNullable();
      t.text('success_url').nullable();
      t.text('return_url').nullable();
      t.text('embed_origin').nullable();
      // The products offered, in order (ids; the product rows belong to the products domain).
      json(t, 'product_ids').notNullable();
      t.text('product_id').notNullable();
      t.text('product_price_id').notNullable();
      t.text('currency').notNullable();
      // The amount chosen for a pay-what-you-want price (null: the price's preset or minimum).
      amount(t, 'custom_amount').nullable();
      // Every amount as computed by core/billing/pricing/amounts.ts at the last change.
      amount(t, 'amount').notNullable();
      amount(t, 'discount_amount').notNullable();
      amount(t, 'net_amount').notNullable();
      amount(t, 'tax_amount').notNullable();
      amount(t, 'total_amount').notNullable();
      t.text('discount_id').nullable().references('id').inTable('discounts');
      // Whether the checkout holds one of the discount's redemptions (between confirmation and a decline).
      t.boolean('discount_claimed').notNullable().defaultTo(false);
      t.boolean('allow_discount_codes').notNullable();
      t.boolean('require_billing_address').notNullable();
      t.boolean('allow_trial').notNullable();
      t.text('trial_interval').nullable();
      t.integer('trial_interval_count').nullable();
      t.text('customer_id').nullable().references('id').inTable('customers');
      t.text('external_customer_id').nullable();
      t.text('customer_name').nullable();
      t.text('customer_email').nullable();
      t.text('customer_ip_address').nullable();
      t.text('customer_billing_name').nullable();
      json(t, 'customer_billing_address').nullable();
      t.text('customer_tax_id').nullable();
      t.boolean('is_business_customer').notNullable();
      json(t, 'customer_metadata').notNullable();
      json(t, 'custom_field_data').notNullable();
      json(t, 'metadata').notNullable();
      t.text('locale').nullable();
      // What paying it made (ids in tables of later migrations: no foreign keys).
      t.text('subscription_id').nullable();
      t.text('order_id').nullable();
      t.text('payment_id').nullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.index(['organization_id', 'created_at'], 'checkouts_organization_created_idx');
    });

    await db.schema.createTable('payments', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      // A declined first payment is recorded before any customer exists.
      t.text('customer_id').nullable().references('id').inTable('customers');
      t.text('checkout_id').nullable().references('id').inTable('checkouts');
      t.text('order_id').nullable();
      t.text('processor').notNullable();
      t.text('processor_payment_id').nullable();
      amount(t, 'amount').notNullable();
      t.text('currency').notNullable();
      t.text('status').notNullable();
      t.text('method_brand').nullable();
      t.text('method_last4').nullable();
      t.text('decline_code').nullable();
      t.text('decline_message').nullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['organization_id', 'created_at'], 'payments_organization_created_idx');
      t.index(['checkout_id'], 'payments_checkout_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('payments');
    await db.schema.dropTableIfExists('checkouts');
    await db.schema.dropTableIfExists('payment_methods');
    await db.schema.dropTableIfExists('tax_rates');
  },
};
