import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * The local mail outbox: with no SMTP server configured, every message Till would send (verification,
 * password reset, change of email, invitations) is kept here so an admin can read it with `tilld mail list`.
 */
export const email: Migration = {
  name: '0020_email',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('mail_outbox', (t) => {
      t.text('id').primary();
      t.text('to_address').notNullable();
      t.text('subject').notNullable();
      t.text('body').notNullable();
      timestamp(t, 'created_at').notNullable();
      t.index(['created_at'], 'mail_outbox_created_at_idx');
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('mail_outbox');
  },
};
