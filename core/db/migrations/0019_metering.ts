import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Usage metering: ingested events, meters, customer meters, and the metered-unit columns of prices.
 *
 * Event times are epoch milliseconds in bigints (`timestamp_ms`, `ingested_ms`): they compare and bucket the same
 * way on both dialects, and keep the hot indexes narrow. The (organization, name, time) index carries the
 * customer columns too, so a count meter's quantities (for everyone or one customer) are answered from the
 * index alone. `(organization_id, external_id)` is unique: ingest skips duplicates with ON CONFLICT DO NOTHING.
 */
export const metering: Migration = {
  name: '0019_metering',

  async up(db) {
    const { timestamp, json, amount } = columnHelpers(db);
    await db.schema.createTable('events', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('name').notNullable();
      // 'user' (ingested) or 'system' (meter.credited, meter.reset written by Till).
      t.text('source').notNullable();
      t.bigInteger('timestamp_ms').notNullable();
      t.bigInteger('ingested_ms').notNullable();
      t.text('customer_id').nullable();
      t.text('external_customer_id').nullable();
      t.text('external_id').nullable();
      t.text('parent_id').nullable();
      json(t, 'metadata').notNullable();
      t.unique(['organization_id', 'external_id'], { indexName: 'events_organization_external_id_uidx' });
      t.index(['organization_id', 'name', 'timestamp_ms', 'customer_id', 'external_customer_id'], 'events_organization_name_time_idx');
      t.index(['organization_id', 'customer_id', 'timestamp_ms'], 'events_organization_customer_time_idx');
      t.index(['organization_id', 'external_customer_id', 'timestamp_ms'], 'events_organization_external_customer_time_idx');
      t.index(['organization_id', 'timestamp_ms'], 'events_organization_time_idx');
    });

    await db.schema.createTable('meters', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('name').notNullable();
      json(t, 'filter').notNullable();
      json(t, 'aggregation').notNullable();
      t.text('unit').notNullable();
      t.text('custom_label').nullable();
      t.double('custom_multiplier').nullable();
      json(t, 'metadata').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      timestamp(t, 'archived_at').nullable();
      t.index(['organization_id', 'created_at'], 'meters_organization_created_idx');
    });

    await db.schema.createTable('customer_meters', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
      t.text('meter_id').notNullable().references('id').inTable('meters').onDelete('CASCADE');
      t.double('consumed_units').notNullable();
      t.double('credited_units').notNullable();
      t.double('balance').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      t.unique(['customer_id', 'meter_id'], { indexName: 'customer_meters_customer_meter_uidx' });
      t.index(['organization_id', 'modified_at'], 'customer_meters_organization_modified_idx');
    });

    await db.schema.alterTable('product_prices', (t) => {
      // metered_unit: a decimal string of minor units per unit (Polar allows fractions of a cent), an optional cap.
      t.text('unit_amount').nullable();
      amount(t, 'cap_amount').nullable();
      t.text('meter_id').nullable().references('id').inTable('meters');
    });
  },

  async down(db) {
    await db.schema.alterTable('product_prices', (t) => {
      t.dropForeign(['meter_id']);
      t.dropColumn('unit_amount');
      t.dropColumn('cap_amount');
      t.dropColumn('meter_id');
    });
    await db.schema.dropTableIfExists('customer_meters');
    await db.schema.dropTableIfExists('meters');
    await db.schema.dropTableIfExists('events');
  },
};
