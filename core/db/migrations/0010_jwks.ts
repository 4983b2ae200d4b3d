import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Better Auth's `jwks` table for the jwt plugin (core/auth/auth.ts): the key pairs that sign the
 * tokens of GET /api/auth/token. Transcribed from `getAuthTables(authOptions(…))` of better-auth
 * 1.7.25 and written out, like 0001_auth, so it never changes when Better Auth does.
 *
 * `privateKey` holds the private JWK encrypted with TILL_SECRET (Better Auth's default, kept);
 * `publicKey` the public JWK as JSON. `expiresAt` is when a key stops signing (rotation); it stays
 * published at /api/auth/jwks for the grace period after that. `alg` and `crv` name the algorithm.
 */
export const jwks: Migration = {
  name: '0010_jwks',

  async up(db) {
    const { timestamp } = columnHelpers(db);
    await db.schema.createTable('jwks', (t) => {
      t.text('id').notNullable().primary();
      t.text('publicKey').notNullable();
      t.text('privateKey').notNullable();
      timestamp(t, 'createdAt').notNullable();
      timestamp(t, 'expiresAt').nullable();
      t.text('alg').nullable();
      t.text('crv').nullable();
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('jwks');
  },
};
