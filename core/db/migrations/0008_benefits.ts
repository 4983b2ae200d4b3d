import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/** Benefits an organization defines (granting them comes with commerce). Deleting one is soft. */
export const benefits: Migration = {
  name: '0008_benefits',

  async up(db) {
    const { timestamp, json } = columnHelpers(db);
    await db.schema.createTable('benefits', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('type').notNullable();
      t.text('description').notNullable();
      t.boolean('selectable').notNullable();
      t.boolean('deletable').notNullable();
      // null reads as "public", as in Polar.
      t.text('visibility').nullable();
      // The type's properties as the API returns them; never a credential.
      json(t, 'properties').notNullable();
      json(t, 'metadata').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      timestamp(t, 'deleted_at').nullable();
      t.index(['organization_id', 'created_at'], 'benefits_organization_created_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('benefits');
  },
};
