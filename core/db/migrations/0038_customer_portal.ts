import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * The customer portal's pages:
 * - `customer_portal_codes`: one-time sign-in codes mailed to a customer's address. Only an HMAC of the code is kept,
 *   and of the requester's IP (rate limits count by it without keeping addresses). A row is written for every
 *   request, customer or not, so the limits (and the answer) are the same either way.
 * - `customer_mails`: which outbox events have had their customer mail (receipt, renewal receipt, cancellation),
 *   one row per event, so several daemons never mail twice; `customer_mail_floor` is the outbox position below
 *   which every event has been looked at (events from before this migration are never mailed).
 */
export const customerPortal: Migration = {
  name: '0038_customer_portal',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('customer_portal_codes', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('email_lower').notNullable();
      t.text('code_hash').notNullable();
      t.text('ip_hash').notNullable();
      t.integer('attempts').notNullable().defaultTo(0);
      timestamp(t, 'expires_at').notNullable();
      timestamp(t, 'used_at').nullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['organization_id', 'email_lower', 'created_at'], 'customer_portal_codes_email_idx');
      t.index(['ip_hash', 'created_at'], 'customer_portal_codes_ip_idx');
    });
    await db.schema.createTable('customer_mails', (t) => {
      t.text('event_id').primary();
      t.text('kind').notNullable();
      timestamp(t, 'created_at').notNullable();
    });
    await db.schema.createTable('customer_mail_floor', (t) => {
      t.integer('id').primary();
      t.bigInteger('seq').notNullable();
    });
    const row = await db('webhook_events').max({ seq: 'seq' }).first();
    await db('customer_mail_floor').insert({ id: 1, seq: Number(row?.seq ?? 0) });
    await db.schema.alterTable('webhook_events', (t) => t.index(['type', 'seq'], 'webhook_events_type_seq_idx'));
  },

  async down(db) {
    await db.schema.alterTable('webhook_events', (t) => t.dropIndex(['type', 'seq'], 'webhook_events_type_seq_idx'));
    await db.schema.dropTableIfExists('customer_mail_floor');
    await db.schema.dropTableIfExists('customer_mails');
    await db.schema.dropTableIfExists('customer_portal_codes');
  },
};
