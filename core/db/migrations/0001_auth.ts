import type { Knex } from 'knex';
import type { Migration } from '../migrate.js';

/**
 * Better Auth's tables for Till's configuration (core/auth/auth.ts: email and password, bearer,
 * device authorization, admin, organization with teams and dynamic access control; captcha adds
 * no table). Transcribed from `getAuthTables(authOptions(…))` of better-auth 1.7.25 and written
 * out in full so this migration never changes when Better Auth does: a later Better Auth schema
 * change gets a migration of its own (0001_auth.test.ts fails until it exists).
 *
 * Column types, matching the knex adapter's conversions (core/auth/knex-adapter.ts):
 * - ids and strings: text (PostgreSQL text is indexable at any length; SQLite has only text);
 * - dates: timestamptz on PostgreSQL; on SQLite a datetime column holding ISO-8601 UTC text,
 *   which sorts and compares correctly as text;
 * - booleans: boolean (SQLite stores 0/1);
 * - foreign keys cascade on delete, like Better Auth's own migrations, and are indexed.
 */

const isPostgres = (db: Knex) => ['pg', 'postgres', 'postgresql'].includes(String(db.client.config.client));

/** Tables in creation order (parents first); dropped in reverse. */
const TABLES = [
  'user',
  'session',
  'account',
  'verification',
  'deviceCode',
  'organization',
  'organizationRole',
  'team',
  'teamMember',
  'member',
  'invitation',
] as const;

export const authTables: Migration = {
  name: '0001_auth',

  async up(db) {
    const pg = isPostgres(db);
    const id = (t: Knex.CreateTableBuilder) => t.text('id').notNullable().primary();
    const date = (t: Knex.CreateTableBuilder, name: string) =>
      pg ? t.timestamp(name, { useTz: true }) : t.dateTime(name);
    /** A required reference to `table`.id, deleted with its parent and indexed for lookups and cascades. */
    const ref = (t: Knex.CreateTableBuilder, table: string, column: string, indexName: string) => {
      t.text(column).notNullable();
      t.foreign(column).references('id').inTable(table).onDelete('CASCADE');
      t.index([column], indexName);
    };

    await db.schema.createTable('user', (t) => {
      id(t);
      t.text('name').notNullable();
      t.text('email').notNullable();
      t.boolean('emailVerified').notNullable();
      t.text('image').nullable();
      date(t, 'createdAt').notNullable();
      date(t, 'updatedAt').notNullable();
      // admin plugin
      t.text('role').nullable();
      t.boolean('banned').nullable();
      t.text('banReason').nullable();
      date(t, 'banExpires').nullable();
      t.unique(['email'], { indexName: 'user_email_uidx' });
    });

    await db.schema.createTable('session', (t) => {
      id(t);
      date(t, 'expiresAt').notNullable();
      t.text('token').notNullable();
      date(t, 'createdAt').notNullable();
      date(t, 'updatedAt').notNullable();
      t.text('ipAddress').nullable();
      t.text('userAgent').nullable();
      ref(t, 'user', 'userId', 'session_userId_idx');
      // admin plugin
      t.text('impersonatedBy').nullable();
      // organization plugin (not foreign keys in Better Auth's schema)
      t.text('activeOrganizationId').nullable();
      t.text('activeTeamId').nullable();
      t.unique(['token'], { indexName: 'session_token_uidx' });
    });

    await db.schema.createTable('account', (t) => {
      id(t);
      t.text('accountId').notNullable();
      t.text('providerId').notNullable();
      ref(t, 'user', 'userId', 'account_userId_idx');
      t.text('accessToken').nullable();
      t.text('refreshToken').nullable();
      t.text('idToken').nullable();
      date(t, 'accessTokenExpiresAt').nullable();
      date(t, 'refreshTokenExpiresAt').nullable();
      t.text('scope').nullable();
      t.text('password').nullable();
      date(t, 'createdAt').notNullable();
      date(t, 'updatedAt').notNullable();
      // Sign-in looks accounts up by provider and provider account id.
      t.index(['providerId', 'accountId'], 'account_providerId_accountId_idx');
    });

    await db.schema.createTable('verification', (t) => {
      id(t);
      t.text('identifier').notNullable();
      t.text('value').notNullable();
      date(t, 'expiresAt').notNullable();
      date(t, 'createdAt').notNullable();
      date(t, 'updatedAt').notNullable();
      t.index(['identifier'], 'verification_identifier_idx');
    });

    // deviceAuthorization plugin (RFC 8628)
    await db.schema.createTable('deviceCode', (t) => {
      id(t);
      t.text('deviceCode').notNullable();
      t.text('userCode').notNullable();
      // The approving user; not a foreign key in Better Auth's schema.
      t.text('userId').nullable();
      date(t, 'expiresAt').notNullable();
      t.text('status').notNullable();
      date(t, 'lastPolledAt').nullable();
      t.integer('pollingInterval').nullable();
      t.text('clientId').nullable();
      t.text('scope').nullable();
      t.unique(['deviceCode'], { indexName: 'deviceCode_deviceCode_uidx' });
      t.unique(['userCode'], { indexName: 'deviceCode_userCode_uidx' });
    });

    // organization plugin
    await db.schema.createTable('organization', (t) => {
      id(t);
      t.text('name').notNullable();
      t.text('slug').notNullable();
      t.text('logo').nullable();
      date(t, 'createdAt').notNullable();
      t.text('metadata').nullable();
      t.unique(['slug'], { indexName: 'organization_slug_uidx' });
    });

    // organization plugin, dynamicAccessControl
    await db.schema.createTable('organizationRole', (t) => {
      id(t);
      ref(t, 'organization', 'organizationId', 'organizationRole_organizationId_idx');
      t.text('role').notNullable();
      t.text('permission').notNullable();
      date(t, 'createdAt').notNullable();
      date(t, 'updatedAt').nullable();
      t.index(['role'], 'organizationRole_role_idx');
    });

    // organization plugin, teams
    await db.schema.createTable('team', (t) => {
      id(t);
      t.text('name').notNullable();
      t.integer('memberCount').notNullable();
      ref(t, 'organization', 'organizationId', 'team_organizationId_idx');
      date(t, 'createdAt').notNullable();
      date(t, 'updatedAt').nullable();
    });

    await db.schema.createTable('teamMember', (t) => {
      id(t);
      ref(t, 'team', 'teamId', 'teamMember_teamId_idx');
      ref(t, 'user', 'userId', 'teamMember_userId_idx');
      t.text('membershipKey').nullable();
      date(t, 'createdAt').nullable();
      t.unique(['membershipKey'], { indexName: 'teamMember_membershipKey_uidx' });
    });

    await db.schema.createTable('member', (t) => {
      id(t);
      ref(t, 'organization', 'organizationId', 'member_organizationId_idx');
      ref(t, 'user', 'userId', 'member_userId_idx');
      t.text('role').notNullable();
      date(t, 'createdAt').notNullable();
    });

    await db.schema.createTable('invitation', (t) => {
      id(t);
      ref(t, 'organization', 'organizationId', 'invitation_organizationId_idx');
      t.text('email').notNullable();
      t.text('role').nullable();
      t.text('teamId').nullable();
      t.text('status').notNullable();
      date(t, 'expiresAt').notNullable();
      date(t, 'createdAt').notNullable();
      ref(t, 'user', 'inviterId', 'invitation_inviterId_idx');
      t.index(['email'], 'invitation_email_idx');
    });
  },

  async down(db) {
    for (const table of [...TABLES].reverse()) await db.schema.dropTableIfExists(table);
  },
};
