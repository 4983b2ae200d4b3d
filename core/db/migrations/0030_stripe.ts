import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Stripe's side of payments. `stripe_events` remembers every Stripe event id tilld has processed, so a delivery
 * Stripe repeats (it retries until it hears 2xx, and may send one event twice) is answered without acting twice.
 * `disputes` holds chargebacks as Polar's disputes API shows them: one per Stripe dispute, tied to the payment and
 * order it disputes, its amount split into net and tax as a refund of the same total would be.
 */
export const stripe: Migration = {
  name: '0030_stripe',

  async up(db) {
    const { timestamp, amount } = columnHelpers(db);
    await db.schema.createTable('stripe_events', (t) => {
      t.text('id').primary();
      t.text('type').notNullable();
      timestamp(t, 'received_at').notNullable();
      timestamp(t, 'processed_at').nullable();
    });
    await db.schema.createTable('disputes', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('order_id').notNullable();
      t.text('payment_id').notNullable();
      t.text('customer_id').notNullable();
      t.text('processor').notNullable();
      t.text('processor_dispute_id').notNullable();
      t.text('status').notNullable();
      t.text('reason').nullable();
      amount(t, 'amount').notNullable();
      amount(t, 'tax_amount').notNullable();
      t.text('currency').notNullable();
      timestamp(t, 'evidence_due_by').nullable();
      t.boolean('past_due').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.unique(['processor', 'processor_dispute_id'], { indexName: 'disputes_processor_uidx' });
      t.index(['organization_id', 'created_at'], 'disputes_organization_created_idx');
      t.index(['order_id'], 'disputes_order_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('disputes');
    await db.schema.dropTableIfExists('stripe_events');
  },
};
