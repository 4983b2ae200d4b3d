import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Pay links: when a subscription's renewal (or a dunning retry) is declined or needs the customer's authentication,
 * the customer is mailed a link to pay that one owed order on-session. Only the SHA-256 of the link's token is
 * kept; a link opens one order, until it expires.
 */
export const payLinks: Migration = {
  name: '0040_pay_links',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('pay_links', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('subscription_id').notNullable();
      t.text('order_id').notNullable();
      // The declined try whose mail carried this link: one link per failed try, however often its job runs.
      t.text('failed_payment_id').nullable().unique('pay_links_failed_payment_uidx');
      t.text('token_hash').notNullable().unique('pay_links_token_hash_uidx');
      timestamp(t, 'expires_at').notNullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['order_id'], 'pay_links_order_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('pay_links');
  },
};
