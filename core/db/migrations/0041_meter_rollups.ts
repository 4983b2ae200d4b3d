import type { Migration } from '../migrate.js';

/**
 * Pre-aggregated metering (issue 21). Both tables hold mergeable partial aggregates of a meter's events — how many
 * events, how many carried a numeric value, their sum, smallest and largest — so count, sum, avg, min and max are
 * answered without reading the events again. Ingestion adds each batch's partials in its own transaction.
 *
 * - `customer_meter_usage`: one row per meter and customer, the events ingested since the customer's last meter
 *   reset (`since_ms`). `pending` = 1 while the row lacks a baseline (created by an ingest, or invalidated by a
 *   reset, a meter change or a new external id): reads then aggregate the events, and the refresh job rebuilds it.
 * - `meter_rollups`: per meter, hour (UTC epoch ms) and customer key (a customer id, `x:<external id>` for events
 *   of no known customer, `#0`…`#7` for everyone). `meter_rollup_states` says whether a meter's rollups are complete
 *   (`ready`) or still being backfilled from its events (`building`, `cursor` = the last event id taken in).
 */
export const meterRollups: Migration = {
  name: '0041_meter_rollups',

  async up(db) {
    await db.schema.createTable('customer_meter_usage', (t) => {
      t.text('meter_id').notNullable().references('id').inTable('meters').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.bigInteger('since_ms').notNullable();
      t.bigInteger('events').notNullable();
      t.bigInteger('numbers').notNullable();
      t.double('total').notNullable();
      t.double('smallest').nullable();
      t.double('largest').nullable();
      t.integer('pending').notNullable();
      t.primary(['meter_id', 'customer_id']);
      t.index(['customer_id'], 'customer_meter_usage_customer_idx');
    });
    await db.schema.createTable('meter_rollups', (t) => {
      t.text('meter_id').notNullable().references('id').inTable('meters').onDelete('CASCADE');
      t.text('customer_key').notNullable();
      t.bigInteger('hour_ms').notNullable();
      t.bigInteger('events').notNullable();
      t.bigInteger('numbers').notNullable();
      t.double('total').notNullable();
      t.double('smallest').nullable();
      t.double('largest').nullable();
      t.primary(['meter_id', 'customer_key', 'hour_ms']);
    });
    await db.schema.createTable('meter_rollup_states', (t) => {
      t.text('meter_id').primary().references('id').inTable('meters').onDelete('CASCADE');
      t.text('status').notNullable();
      t.text('cursor').nullable();
    });
    // Meters that exist already are backfilled from their events once the daemon starts.
    await db.raw(`insert into meter_rollup_states (meter_id, status, cursor) select id, 'building', null from meters`);
  },

  async down(db) {
    await db.schema.dropTableIfExists('meter_rollup_states');
    await db.schema.dropTableIfExists('meter_rollups');
    await db.schema.dropTableIfExists('customer_meter_usage');
  },
};
