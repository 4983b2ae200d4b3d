import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Fixed discounts in several currencies, as Polar's `amounts` map: one row per currency a fixed discount takes an
 * amount off in. The single `amount`/`currency` columns of 0005 are copied here and no longer written.
 */
export const discountAmounts: Migration = {
  name: '0039_discount_amounts',

  async up(db) {
    const { amount } = columnHelpers(db);
    await db.schema.createTable('discount_amounts', (t) => {
      t.text('discount_id').notNullable().references('id').inTable('discounts').onDelete('CASCADE');
      t.text('currency').notNullable();
      amount(t, 'amount').notNullable();
      t.primary(['discount_id', 'currency']);
    });
    await db.raw(
      "insert into discount_amounts (discount_id, currency, amount) select id, currency, amount from discounts where type = 'fixed' and amount is not null and currency is not null",
    );
  },

  async down(db) {
    await db.schema.dropTableIfExists('discount_amounts');
  },
};
