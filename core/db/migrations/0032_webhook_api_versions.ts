import type { Migration } from '../migrate.js';

/**
 * The Polar API version a webhook endpoint receives its payloads in (Polar's WebhookEndpoint.api_version), and the
 * version each queued event was written in (WebhookEvent.api_version). Existing rows are in 2026-04, the version Till
 * has always written.
 */
export const webhookApiVersions: Migration = {
  name: '0032_webhook_api_versions',

  async up(db) {
    await db.schema.alterTable('webhook_endpoints', (table) => {
      table.text('api_version').notNullable().defaultTo('2026-04');
    });
    await db.schema.alterTable('webhook_endpoint_events', (table) => {
      table.text('api_version').notNullable().defaultTo('2026-04');
    });
  },

  async down(db) {
    await db.schema.alterTable('webhook_endpoint_events', (table) => {
      table.dropColumn('api_version');
    });
    await db.schema.alterTable('webhook_endpoints', (table) => {
      table.dropColumn('api_version');
    });
  },
};
