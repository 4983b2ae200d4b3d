import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Payments become recorded intents (core/payments/processor.ts): a row is written, status `created`, in the same
 * transaction as the claim it pays for, before the processor is called; the processor's answer (or the settle job,
 * after a crash) settles it. The row keeps everything needed to ask the processor again: the idempotency key
 * (unique: one intent, one charge), the method, whether the customer was present, where to come back after 3-D
 * Secure. `purpose` says what a settled intent finishes (a checkout, a subscription's owed order, a plan change,
 * whose planned change waits in `plan`). Rows from before keep their status (succeeded/failed) and get a key of
 * their own id.
 *
 * The sandbox processor keeps its side (intents and refunds it has accepted) in sandbox_* tables, written outside
 * the daemon's transactions as a real processor's ledger would be: they survive a crash of tilld.
 */
export const paymentIntents: Migration = {
  name: '0027_payment_intents',

  async up(db) {
    const { timestamp, json, amount } = columnHelpers(db);
    await db.schema.alterTable('payments', (t) => {
      t.text('idempotency_key').nullable();
      t.text('purpose').nullable();
      t.text('subscription_id').nullable();
      t.text('processor_method_id').nullable();
      t.text('processor_customer_id').nullable();
      t.integer('method_exp_month').nullable();
      t.integer('method_exp_year').nullable();
      t.boolean('off_session').nullable();
      t.text('description').nullable();
      t.text('return_url').nullable();
      t.text('redirect_url').nullable();
      t.text('saved_method_id').nullable();
      t.integer('attempt').nullable();
      json(t, 'plan').nullable();
      timestamp(t, 'modified_at').nullable();
    });
    await db('payments').update({ idempotency_key: db.raw("'till_' || id"), purpose: db.raw("case when checkout_id is not null then 'checkout' else 'subscription' end") });
    await db.schema.alterTable('payments', (t) => {
      t.unique(['idempotency_key'], { indexName: 'payments_idempotency_key_uidx' });
      t.index(['order_id'], 'payments_order_idx');
      // One try per owed order and dunning attempt: two workers charging the same renewal write one intent.
      t.unique(['order_id', 'attempt'], { indexName: 'payments_order_attempt_uidx' });
      t.index(['subscription_id'], 'payments_subscription_idx');
      t.index(['status'], 'payments_status_idx');
    });
    // Stripe keeps a customer of its own that off-session charges name beside the method.
    await db.schema.alterTable('payment_methods', (t) => {
      t.text('processor_customer_id').nullable();
    });
    await db.schema.createTable('sandbox_intents', (t) => {
      t.text('id').primary();
      t.text('idempotency_key').notNullable().unique('sandbox_intents_key_uidx');
      t.text('payment_id').notNullable();
      t.text('method_id').notNullable();
      amount(t, 'amount').notNullable();
      t.text('currency').notNullable();
      t.boolean('off_session').notNullable();
      t.text('status').notNullable();
      t.text('decline_code').nullable();
      t.text('return_url').nullable();
      // Every createIntent with this key (a replay after a crash counts again; it never charges again).
      t.integer('calls').notNullable();
      timestamp(t, 'created_at').notNullable();
    });
    await db.schema.createTable('sandbox_refunds', (t) => {
      t.text('id').primary();
      t.text('idempotency_key').notNullable().unique('sandbox_refunds_key_uidx');
      t.text('intent_id').notNullable();
      amount(t, 'amount').notNullable();
      t.text('status').notNullable();
      t.text('failure_reason').nullable();
      t.integer('calls').notNullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['intent_id'], 'sandbox_refunds_intent_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('sandbox_refunds');
    await db.schema.dropTableIfExists('sandbox_intents');
    await db.schema.alterTable('payment_methods', (t) => {
      t.dropColumn('processor_customer_id');
    });
    await db.schema.alterTable('payments', (t) => {
      t.dropUnique(['idempotency_key'], 'payments_idempotency_key_uidx');
      t.dropUnique(['order_id', 'attempt'], 'payments_order_attempt_uidx');
      t.dropIndex(['order_id'], 'payments_order_idx');
      t.dropIndex(['subscription_id'], 'payments_subscription_idx');
      t.dropIndex(['status'], 'payments_status_idx');
      for (const column of ['idempotency_key', 'purpose', 'subscription_id', 'processor_method_id', 'processor_customer_id', 'method_exp_month', 'method_exp_year', 'off_session', 'description', 'return_url', 'redirect_url', 'saved_method_id', 'attempt', 'plan', 'modified_at']) t.dropColumn(column);
    });
  },
};
