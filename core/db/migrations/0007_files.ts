import type { Migration } from '../migrate.js';
import { columnHelpers } from '../dialect.js';

/**
 * Files an organization uploads (downloadables, product media, avatars): the record here, the bytes in
 * the daemon's file storage. A file is created with the parts its client will upload, each part PUT to
 * an upload URL carrying a random token (only its SHA-256 is kept), then marked uploaded once its size
 * and checksum are verified.
 */
export const files: Migration = {
  name: '0007_files',

  async up(db) {
    const { timestamp, amount } = columnHelpers(db);
    await db.schema.createTable('files', (t) => {
      t.text('id').primary();
      t.text('organization_id').notNullable().references('id').inTable('organization').onDelete('CASCADE');
      t.text('service').notNullable();
      t.text('name').notNullable();
      t.text('mime_type').notNullable();
      amount(t, 'size').notNullable();
      t.text('version').nullable();
      // Declared at creation (then verified), or computed from the bytes when it was not declared.
      t.text('checksum_sha256_base64').nullable();
      t.text('checksum_etag').nullable();
      t.text('storage_version').nullable();
      timestamp(t, 'last_modified_at').nullable();
      t.boolean('is_uploaded').notNullable();
      t.text('upload_id').notNullable();
      t.text('upload_token_hash').notNullable().unique();
      timestamp(t, 'upload_expires_at').notNullable();
      timestamp(t, 'created_at').notNullable();
      timestamp(t, 'modified_at').nullable();
      timestamp(t, 'deleted_at').nullable();
      t.index(['organization_id', 'created_at'], 'files_organization_created_idx');
    });

    await db.schema.createTable('file_upload_parts', (t) => {
      t.text('file_id').notNullable().references('id').inTable('files').onDelete('CASCADE');
      t.integer('number').notNullable();
      amount(t, 'chunk_start').notNullable();
      amount(t, 'chunk_end').notNullable();
      t.text('checksum_sha256_base64').nullable();
      // Set when the part's bytes arrive: their SHA-256 (hex, also the part's ETag) and their length.
      t.text('received_sha256_hex').nullable();
      amount(t, 'received_size').nullable();
      timestamp(t, 'received_at').nullable();
      t.primary(['file_id', 'number']);
    });
  },

  async down(db) {
    await db.schema.dropTableIfExists('file_upload_parts');
    await db.schema.dropTableIfExists('files');
  },
};
