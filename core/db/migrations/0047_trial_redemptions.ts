import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Trials taken, one row per checkout that started one (Polar's trial_redemptions): with the organization's
 * subscription_settings.prevent_trial_abuse, a customer whose address (sub-address stripped) took a trial before
 * gets no other.
 */
export const trialRedemptions: Migration = {
  name: '0047_trial_redemptions',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('trial_redemptions', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable();
      t.text('customer_email').notNullable();
      t.text('product_id').nullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['organization_id', 'customer_email'], 'trial_redemptions_email_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('trial_redemptions');
  },
};
