import type { Knex } from 'knex';
import { fromDbBool, fromDbInt, fromDbTime, fromDbTimeOrNull, toDbTime } from '../../db/columns.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import { storageKeyOf, type FileRecord, type FileService, type UploadPart } from './schema.js';
import { dialectOf } from '../../db/database.js';

const PART_ROWS_PER_INSERT = 400;

type Executor = Knex | Knex.Transaction;
const FILES = 'files';
const PARTS = 'file_upload_parts';

/** A file from its row (also from a JSON row: another repository reading it with its own). */
export function toFile(row: Record<string, unknown>): FileRecord {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    service: row.service as FileService,
    name: String(row.name),
    path: storageKeyOf(String(row.organization_id), String(row.id)),
    mimeType: String(row.mime_type),
    size: fromDbInt(row.size),
    version: (row.version as string | null) ?? null,
    checksumSha256Base64: (row.checksum_sha256_base64 as string | null) ?? null,
    checksumEtag: (row.checksum_etag as string | null) ?? null,
    storageVersion: (row.storage_version as string | null) ?? null,
    lastModifiedAt: fromDbTimeOrNull(row.last_modified_at),
    isUploaded: fromDbBool(row.is_uploaded),
    uploadId: String(row.upload_id),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

function toPart(row: Record<string, unknown>): UploadPart {
  return {
    number: fromDbInt(row.number),
    chunkStart: fromDbInt(row.chunk_start),
    chunkEnd: fromDbInt(row.chunk_end),
    checksumSha256Base64: (row.checksum_sha256_base64 as string | null) ?? null,
    receivedSha256Hex: (row.received_sha256_hex as string | null) ?? null,
    receivedSize: row.received_size === null || row.received_size === undefined ? null : fromDbInt(row.received_size),
  };
}

export async function insertFile(
  trx: Executor,
  file: FileRecord,
  parts: readonly UploadPart[],
  upload: { tokenHash: string; expiresAt: Date },
): Promise<void> {
  await trx(FILES).insert({
    id: file.id,
    organization_id: file.organizationId,
    service: file.service,
    name: file.name,
    mime_type: file.mimeType,
    size: file.size,
    version: file.version,
    checksum_sha256_base64: file.checksumSha256Base64,
    checksum_etag: null,
    storage_version: null,
    last_modified_at: null,
    is_uploaded: false,
    upload_id: file.uploadId,
    upload_token_hash: upload.tokenHash,
    upload_expires_at: toDbTime(upload.expiresAt),
    created_at: toDbTime(file.createdAt),
    modified_at: null,
  });
  // Chunked: knex writes a multi-row SQLite insert as one compound SELECT, which SQLite caps at 500 terms,
  // and an upload may have 10 000 parts.
  const rows = parts.map((part) => ({
    file_id: file.id,
    number: part.number,
    chunk_start: part.chunkStart,
    chunk_end: part.chunkEnd,
    checksum_sha256_base64: part.checksumSha256Base64,
  }));
  for (let i = 0; i < rows.length; i += PART_ROWS_PER_INSERT) await trx(PARTS).insert(rows.slice(i, i + PART_ROWS_PER_INSERT));
}

/** A live (not deleted) file of one of the organizations. */
export async function findFile(db: Executor, id: string, organizationIds: Iterable<string>, options: { forUpdate?: boolean } = {}): Promise<FileRecord | undefined> {
  // `forUpdate` locks the row on PostgreSQL until the transaction ends, so changes apply one by one.
  const query = db(FILES).where({ id }).whereIn('organization_id', [...organizationIds]).whereNull('deleted_at');
  if (options.forUpdate && dialectOf(db as Knex) === 'postgres') query.forUpdate();
  const row = await query.first();
  return row ? toFile(row) : undefined;
}

/** Live files by id, in one query (callers check each file's organization). */
export async function findFilesByIds(db: Executor, ids: readonly string[]): Promise<Map<string, FileRecord>> {
  if (ids.length === 0) return new Map();
  const rows = await db(FILES).whereIn('id', [...new Set(ids)]).whereNull('deleted_at');
  return new Map(rows.map((row) => [String(row.id), toFile(row)]));
}

/** The live file an upload token belongs to, with the token's expiry. */
export async function findFileByUploadToken(db: Executor, tokenHash: string): Promise<{ file: FileRecord; expiresAt: Date } | undefined> {
  const row = await db(FILES).where({ upload_token_hash: tokenHash }).whereNull('deleted_at').first();
  return row ? { file: toFile(row), expiresAt: fromDbTime(row.upload_expires_at) } : undefined;
}

/** Uploaded, live files, newest first, as Polar lists them. */
export async function listFiles(db: Executor, filter: { organizationIds: readonly string[]; ids?: readonly string[] }, page: PageQuery): Promise<Page<FileRecord>> {
  const scoped = () => {
    const query = db(FILES).whereIn('organization_id', filter.organizationIds).where({ is_uploaded: true }).whereNull('deleted_at');
    if (filter.ids) query.whereIn('id', filter.ids);
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const rows = await scoped().orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }]).limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toFile), totalCount: Number(count) };
}

/** Of the given ids, those naming a live, uploaded file of the organization for that service. */
export async function findUsableFileIds(db: Executor, organizationId: string, ids: readonly string[], service: FileService): Promise<Set<string>> {
  const rows = await db(FILES)
    .where({ organization_id: organizationId, service, is_uploaded: true })
    .whereIn('id', ids)
    .whereNull('deleted_at')
    .select('id');
  return new Set(rows.map((row: { id: string }) => row.id));
}

/** A live, uploaded file of one of the given services (what the public media route serves). */
export async function findUploadedFile(db: Executor, id: string, services: readonly FileService[]): Promise<FileRecord | undefined> {
  const row = await db(FILES).where({ id, is_uploaded: true }).whereIn('service', services).whereNull('deleted_at').first();
  return row ? toFile(row) : undefined;
}

export async function findParts(db: Executor, fileId: string): Promise<UploadPart[]> {
  const rows = await db(PARTS).where({ file_id: fileId }).orderBy('number');
  return rows.map(toPart);
}

/** Records what arrived for a part; null forgets it (its bytes were refused). */
export async function recordPartReceived(db: Executor, fileId: string, number: number, received: { sha256Hex: string; size: number; at: Date } | null) {
  await db(PARTS)
    .where({ file_id: fileId, number })
    .update({ received_sha256_hex: received?.sha256Hex ?? null, received_size: received?.size ?? null, received_at: received ? toDbTime(received.at) : null });
}

/** Marks a file uploaded, once: false when it already was, or was deleted meanwhile. */
export async function markUploaded(trx: Executor, id: string, done: { checksumSha256Base64: string; checksumEtag: string; at: Date }): Promise<boolean> {
  const count = await trx(FILES)
    .where({ id, is_uploaded: false })
    .whereNull('deleted_at')
    .update({
      is_uploaded: true,
      checksum_sha256_base64: done.checksumSha256Base64,
      checksum_etag: done.checksumEtag,
      last_modified_at: toDbTime(done.at),
      modified_at: toDbTime(done.at),
    });
  return count > 0;
}

export async function updateFileRow(trx: Executor, id: string, changes: { name: string; version: string | null; modifiedAt: Date }) {
  await trx(FILES).where({ id }).update({ name: changes.name, version: changes.version, modified_at: toDbTime(changes.modifiedAt) });
}

/** Soft delete; true when a live file was deleted. */
export async function deleteFileRow(trx: Executor, id: string, at: Date): Promise<boolean> {
  const count = await trx(FILES).where({ id }).whereNull('deleted_at').update({ deleted_at: toDbTime(at) });
  return count > 0;
}
