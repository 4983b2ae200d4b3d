import type { Migration } from '../migrate.js';

/**
 * The columns Better Auth's `username` plugin adds to `user` (better-auth 1.7.25, core/auth/auth.ts),
 * written out so this migration never changes when Better Auth does.
 *
 * - `username`: optional, unique. The plugin lowercases a username before every write and lookup,
 *   so the plain unique index makes usernames unique whatever their case ("Ada" and "ada" collide).
 * - `displayUsername`: optional; the username as the user typed it, case kept.
 */
export const usernames: Migration = {
  name: '0011_usernames',

  async up(db) {
    await db.schema.alterTable('user', (t) => {
      t.text('username').nullable();
      t.text('displayUsername').nullable();
      t.unique(['username'], { indexName: 'user_username_uidx' });
    });
  },

  async down(db) {
    await db.schema.alterTable('user', (t) => {
      t.dropUnique(['username'], 'user_username_uidx');
    });
    await db.schema.alterTable('user', (t) => {
      t.dropColumn('displayUsername');
      t.dropColumn('username');
    });
  },
};
