import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Discounts (fixed or percentage, once/forever/repeating) and the products each is restricted to.
 * Discounts are soft-deleted: orders keep pointing at what was redeemed.
 */
export const discounts: Migration = {
  name: '0005_discounts',

  async up(db) {
    const { timestamp, json, amount } = columnHelpers(db);
    await db.schema.createTable('discounts', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('name').notNullable();
      // The code as the seller wrote it (shown back), and upper-cased (what uniqueness and look-ups use).
      t.text('code').nullable();
      t.text('code_key').nullable();
      t.text('type').notNullable();
      t.text('duration').notNullable();
      t.integer('duration_in_months').nullable();
      amount(t, 'amount').nullable();
      t.text('currency').nullable();
      t.integer('basis_points').nullable();
      timestamp(t, 'starts_at').nullable();
      timestamp(t, 'ends_at').nullable();
      t.integer('max_redemptions').nullable();
      t.integer('redemptions_count').notNullable().defaultTo(0);
      json(t, 'metadata').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      timestamp(t, 'deleted_at').nullable();
      t.index(['organization_id', 'created_at'], 'discounts_organization_idx');
    });
    // One live discount per code in an organization; a deleted discount frees its code. The index, not a
    // prior read, is what keeps two concurrent creates from taking the same code.
    await db.raw('create unique index discounts_code_uidx on discounts (organization_id, code_key) where deleted_at is null');

    await db.schema.createTable('discount_products', (t) => {
      t.text('discount_id').notNullable().references('id').inTable('discounts').onDelete('CASCADE');
      // No foreign key: the products table belongs to the products domain; the discounts service
      // checks existence (core/billing/discounts/products.ts) before writing a row here.
      t.text('product_id').notNullable();
      t.integer('position').notNullable();
      t.primary(['discount_id', 'product_id']);
      t.index(['product_id'], 'discount_products_product_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('discount_products');
    await db.schema.dropTableIfExists('discounts');
  },
};
