import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Webhook endpoints and their delivery state.
 *
 * - `webhook_endpoints`: where an organization's events go (url, format, subscribed types, signing secret).
 *   The secret is kept as given because every request is signed with it; it never reaches a log.
 * - `webhook_events.fanned_out_at`: set once an outbox event has been copied to every endpoint that takes it.
 *   Fan-out picks events by this mark, not by a seq cursor, so an event whose transaction commits after a
 *   later-numbered one (PostgreSQL hands out seq before commit) is never stepped over.
 * - `webhook_endpoint_events`: one row per (endpoint, event): the body as the endpoint's format renders it
 *   (frozen, so every retry sends the same bytes), its status (pending, succeeded, failed, skipped), attempts
 *   and the time of the next one, and the claim a worker holds while it sends. Epoch-ms bigints, as `jobs`.
 * - `webhook_deliveries`: one row per attempt: outcome, HTTP code, duration, first 2,048 characters of the answer.
 */
export const webhooks: Migration = {
  name: '0017_webhooks',

  async up(db) {
    const { timestamp, json } = columnHelpers(db);
    await db.schema.createTable('webhook_endpoints', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('url').notNullable();
      t.text('name').nullable();
      t.text('format').notNullable();
      t.text('secret').notNullable();
      json(t, 'events').notNullable();
      t.boolean('enabled').notNullable();
      t.integer('consecutive_failures').notNullable().defaultTo(0);
      timestamp(t, 'disabled_at').nullable();
      t.text('disabled_reason').nullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      timestamp(t, 'deleted_at').nullable();
      t.index(['organization_id', 'created_at'], 'webhook_endpoints_organization_idx');
    });
    await db.schema.alterTable('webhook_events', (t) => {
      t.bigInteger('fanned_out_at_ms').nullable();
    });
    await db.raw('create index webhook_events_fan_out_idx on webhook_events (seq) where fanned_out_at_ms is null');
    await db.schema.createTable('webhook_endpoint_events', (t) => {
      t.text('id').primary();
      t.text('endpoint_id').notNullable().references('id').inTable('webhook_endpoints').onDelete('CASCADE');
      // No foreign key to the outbox: the frozen payload here outlives any pruning of webhook_events.
      t.text('event_id').notNullable();
      t.bigInteger('event_seq').notNullable();
      t.text('organization_id').notNullable();
      t.text('type').notNullable();
      t.text('payload').notNullable();
      t.text('status').notNullable();
      t.integer('attempts').notNullable();
      t.bigInteger('next_attempt_at_ms').notNullable();
      t.integer('last_http_code').nullable();
      t.text('locked_by').nullable();
      t.bigInteger('locked_until_ms').nullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.unique(['endpoint_id', 'event_id'], { indexName: 'webhook_endpoint_events_uidx' });
      t.index(['endpoint_id', 'status', 'event_seq'], 'webhook_endpoint_events_queue_idx');
      t.index(['status', 'next_attempt_at_ms'], 'webhook_endpoint_events_due_idx');
    });
    await db.schema.createTable('webhook_deliveries', (t) => {
      t.text('id').primary();
      t.text('endpoint_id').notNullable().references('id').inTable('webhook_endpoints').onDelete('CASCADE');
      t.text('endpoint_event_id').notNullable().references('id').inTable('webhook_endpoint_events').onDelete('CASCADE');
      t.text('event_id').notNullable();
      t.text('organization_id').notNullable();
      t.integer('attempt').notNullable();
      t.boolean('succeeded').notNullable();
      t.integer('http_code').nullable();
      t.text('response').nullable();
      t.integer('duration_ms').notNullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['endpoint_id', 'created_at'], 'webhook_deliveries_endpoint_idx');
      t.index(['organization_id', 'created_at'], 'webhook_deliveries_organization_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('webhook_deliveries');
    await db.schema.dropTableIfExists('webhook_endpoint_events');
    await db.raw('drop index if exists webhook_events_fan_out_idx');
    await db.schema.alterTable('webhook_events', (t) => {
      t.dropColumn('fanned_out_at_ms');
    });
    await db.schema.dropTableIfExists('webhook_endpoints');
  },
};
