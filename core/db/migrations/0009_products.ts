import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Products, their prices, and what is attached to them (benefits, media files, custom fields).
 * Neither products nor prices are ever deleted: a product is archived, and a price that an update
 * replaces is archived too, so orders keep pointing at what was sold.
 */
export const products: Migration = {
  name: '0009_products',

  async up(db) {
    const { timestamp, json, amount } = columnHelpers(db);
    await db.schema.createTable('products', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('name').notNullable();
      t.text('description').nullable();
      t.text('visibility').notNullable();
      // Null for a one-time product.
      t.text('recurring_interval').nullable();
      t.integer('recurring_interval_count').nullable();
      t.text('trial_interval').nullable();
      t.integer('trial_interval_count').nullable();
      t.text('meter_interval').nullable();
      t.integer('meter_interval_count').nullable();
      t.boolean('is_archived').notNullable();
      json(t, 'metadata').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.index(['organization_id', 'created_at'], 'products_organization_created_idx');
    });

    await db.schema.createTable('product_prices', (t) => {
      t.text('id').primary();
      t.text('product_id').notNullable().references('id').inTable('products').onDelete('CASCADE');
      t.text('amount_type').notNullable();
      t.text('source').notNullable();
      t.text('price_currency').notNullable();
      t.text('tax_behavior').nullable();
      // fixed
      amount(t, 'price_amount').nullable();
      // custom
      amount(t, 'minimum_amount').nullable();
      amount(t, 'maximum_amount').nullable();
      amount(t, 'preset_amount').nullable();
      // seat_based: {seat_tier_type, tiers}
      json(t, 'seat_tiers').nullable();
      // Set only on a legacy recurring price (Polar's model before products carried the interval).
      t.text('legacy_recurring_interval').nullable();
      t.boolean('is_archived').notNullable();
      // Order within the product's price list (prices created together share a timestamp).
      t.integer('position').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.index(['product_id', 'is_archived'], 'product_prices_product_idx');
    });

    await db.schema.createTable('product_benefits', (t) => {
      t.text('product_id').notNullable().references('id').inTable('products').onDelete('CASCADE');
      t.text('benefit_id').notNullable().references('id').inTable('benefits').onDelete('CASCADE');
      t.integer('position').notNullable();
      t.primary(['product_id', 'benefit_id']);
      t.index(['benefit_id'], 'product_benefits_benefit_idx');
    });

    await db.schema.createTable('product_medias', (t) => {
      t.text('product_id').notNullable().references('id').inTable('products').onDelete('CASCADE');
      t.text('file_id').notNullable().references('id').inTable('files').onDelete('CASCADE');
      t.integer('position').notNullable();
      t.primary(['product_id', 'file_id']);
    });

    await db.schema.createTable('product_custom_fields', (t) => {
      t.text('product_id').notNullable().references('id').inTable('products').onDelete('CASCADE');
      t.text('custom_field_id').notNullable().references('id').inTable('custom_fields').onDelete('CASCADE');
      t.integer('position').notNullable();
      t.boolean('required').notNullable();
      t.primary(['product_id', 'custom_field_id']);
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('product_custom_fields');
    await db.schema.dropTableIfExists('product_medias');
    await db.schema.dropTableIfExists('product_benefits');
    await db.schema.dropTableIfExists('product_prices');
    await db.schema.dropTableIfExists('products');
  },
};
