import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Checkout links: a shareable URL (by its client secret) that opens a fresh checkout for its products each time it is
 * followed. A deleted link keeps its row (deleted_at) so its secret never opens anything again.
 */
export const checkoutLinks: Migration = {
  name: '0043_checkout_links',

  async up(db) {
    const { timestamp, json } = columnHelpers(db);
    await db.schema.createTable('checkout_links', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('client_secret').notNullable().unique('checkout_links_client_secret_uidx');
      t.text('label').nullable();
      t.boolean('allow_discount_codes').notNullable();
      t.boolean('require_billing_address').notNullable();
      // The discount belongs to the discounts domain; one deleted since is ignored when the link is opened.
      t.text('discount_id').nullable();
      t.text('trial_interval').nullable();
      t.integer('trial_interval_count').nullable();
      t.text('success_url').nullable();
      t.text('return_url').nullable();
      json(t, 'metadata').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      timestamp(t, 'deleted_at').nullable();
      t.index(['organization_id', 'created_at'], 'checkout_links_organization_idx');
    });
    await db.schema.createTable('checkout_link_products', (t) => {
      t.text('checkout_link_id').notNullable().references('id').inTable('checkout_links').onDelete('CASCADE');
      t.text('product_id').notNullable();
      t.integer('position').notNullable();
      t.primary(['checkout_link_id', 'position']);
      t.index(['product_id'], 'checkout_link_products_product_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('checkout_link_products');
    await db.schema.dropTableIfExists('checkout_links');
  },
};
