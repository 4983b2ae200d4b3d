import type { Migration } from '../migrate.js';

/** Polar's discount max_redemptions_per_customer: how often one customer may redeem a discount (null: no limit). */
export const discountRedemptionsPerCustomer: Migration = {
  name: '0048_discount_redemptions_per_customer',

  async up(db) {
    await db.schema.alterTable('discounts', (t) => {
      t.integer('max_redemptions_per_customer').nullable();
    });
  },

  async down(db) {
    await db.schema.alterTable('discounts', (t) => {
      t.dropColumn('max_redemptions_per_customer');
    });
  },
};
