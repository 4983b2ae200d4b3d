import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Customers of an organization. A deleted customer keeps its row (deleted_at), and its email and external id are
 * free for a new customer: uniqueness holds among live customers only, through partial unique indexes (the same SQL
 * on SQLite and PostgreSQL), which is also what refuses the second of two concurrent creates.
 */
export const customers: Migration = {
  name: '0004_customers',

  async up(db) {
    const { timestamp, json } = columnHelpers(db);
    await db.schema.createTable('customers', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('external_id').nullable();
      t.text('email').notNullable();
      // The email lowercased in code, so both dialects compare it the same way.
      t.text('email_lower').notNullable();
      t.boolean('email_verified').notNullable().defaultTo(false);
      t.text('type').notNullable().defaultTo('individual');
      t.text('name').nullable();
      t.text('billing_name').nullable();
      json(t, 'billing_address').nullable();
      // [value, format], e.g. ["FR61954506077", "eu_vat"].
      json(t, 'tax_id').nullable();
      t.text('locale').nullable();
      json(t, 'metadata').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      timestamp(t, 'deleted_at').nullable();
      t.index(['organization_id', 'created_at'], 'customers_organization_created_idx');
    });
    await db.raw('create unique index customers_organization_email_uidx on customers (organization_id, email_lower) where deleted_at is null');
    await db.raw(
      'create unique index customers_organization_external_id_uidx on customers (organization_id, external_id) where deleted_at is null and external_id is not null',
    );
  },

  async down(db) {
    await db.schema.dropTableIfExists('customers');
  },
};
