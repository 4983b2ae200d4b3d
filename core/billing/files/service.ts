import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import {
  deleteFileRow,
  findFile,
  findParts,
  findUploadedFile,
  findUsableFileIds,
  insertFile,
  listFiles as listRows,
  updateFileRow,
} from './repository.js';
import { PUBLIC_SERVICES, SERVICE_LIMITS, partKeyOf, storageKeyOf, type FileCreate, type FileRecord, type FileService, type FileUpdate, type UploadPart } from './schema.js';
import { sizeReadable } from './serialize.js';
import type { FileStorage } from './storage.js';

/** The organizations a caller may see files of (read scopes) and change them in (write scopes). */
export interface FileAccess {
  read: ReadonlySet<string>;
  write: ReadonlySet<string>;
}

/** How long upload URLs work, as Polar's presigned S3 URLs: one hour. */
export const UPLOAD_URL_TTL_MS = 60 * 60 * 1000;

export const hashUploadToken = (token: string) => createHash('sha256').update(token).digest('hex');
export const notFound = () => new CoreError('not_found', 'FILE_NOT_FOUND', 'File not found');

/** A file the caller sees and may change; one it cannot see is "not found", never "forbidden". */
export async function writableFile(db: Database, access: FileAccess, id: string): Promise<FileRecord> {
  const file = await findFile(db, id, access.read, { forUpdate: true });
  if (!file) throw notFound();
  if (!access.write.has(file.organizationId)) throw new CoreError('forbidden', 'INSUFFICIENT_SCOPE', 'Changing files needs the files:write scope');
  return file;
}

function limitIssues(request: FileCreate, maxSize: number) {
  const limits = SERVICE_LIMITS[request.service];
  const issues: { loc: (string | number)[]; msg: string; type: string }[] = [];
  if (limits.mimeTypes && !limits.mimeTypes.test(request.mime_type)) {
    issues.push({ loc: ['body', 'mime_type'], msg: `A ${request.service} file must be ${limits.mimeHint}`, type: 'value_error' });
  }
  const max = Math.min(maxSize, limits.maxSize ?? maxSize);
  if (request.size > max) {
    issues.push({ loc: ['body', 'size'], msg: `A ${request.service} file may be at most ${sizeReadable(max)} (${max} bytes)`, type: 'less_than_equal' });
  }
  return issues;
}

/**
 * Records a file about to be uploaded and mints its upload token (in the answer only; its hash is stored).
 * The bytes go to the upload URLs next, then `completeUpload` verifies them.
 */
export async function createFile(
  db: Database,
  clock: Clock,
  input: { organizationId: string; request: FileCreate; maxSize: number },
): Promise<{ file: FileRecord; parts: UploadPart[]; uploadToken: string; expiresAt: Date }> {
  const { request } = input;
  const issues = limitIssues(request, input.maxSize);
  if (issues.length > 0) throw new CoreError('invalid', 'FILE_NOT_ACCEPTED', 'This file is not accepted', issues);
  const now = clock.now();
  const id = newId();
  const file: FileRecord = {
    id,
    organizationId: input.organizationId,
    service: request.service,
    name: request.name,
    path: storageKeyOf(input.organizationId, id),
    mimeType: request.mime_type,
    size: request.size,
    version: request.version ?? null,
    checksumSha256Base64: request.checksum_sha256_base64 ?? null,
    checksumEtag: null,
    storageVersion: null,
    lastModifiedAt: null,
    isUploaded: false,
    uploadId: newId(),
    createdAt: now,
    modifiedAt: null,
  };
  const parts: UploadPart[] = request.upload.parts
    .map((part) => ({
      number: part.number,
      chunkStart: part.chunk_start,
      chunkEnd: part.chunk_end,
      checksumSha256Base64: part.checksum_sha256_base64 ?? null,
      receivedSha256Hex: null,
      receivedSize: null,
    }))
    .sort((a, b) => a.number - b.number);
  const uploadToken = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + UPLOAD_URL_TTL_MS);
  await db.transaction((trx) => insertFile(trx, file, parts, { tokenHash: hashUploadToken(uploadToken), expiresAt }));
  return { file, parts, uploadToken, expiresAt };
}

export function listFiles(db: Database, filter: { organizationIds: readonly string[]; ids?: readonly string[] }, page: PageQuery): Promise<Page<FileRecord>> {
  return listRows(db, filter, page);
}

/** Renames a file or changes its version (`null` clears it). */
export async function updateFile(db: Database, clock: Clock, access: FileAccess, id: string, input: FileUpdate): Promise<FileRecord> {
  return db.transaction(async (trx) => {
    const file = await writableFile(trx, access, id);
    const next: FileRecord = {
      ...file,
      name: input.name ?? file.name,
      version: input.version === undefined ? file.version : input.version,
      modifiedAt: clock.now(),
    };
    await updateFileRow(trx, id, { name: next.name, version: next.version, modifiedAt: next.modifiedAt! });
    return next;
  });
}

/** Deletes a file: the record is kept (soft delete), its bytes and any uploaded parts are removed. */
export async function deleteFile(db: Database, clock: Clock, storage: FileStorage, access: FileAccess, id: string): Promise<void> {
  const { file, parts } = await db.transaction(async (trx) => {
    const found = await writableFile(trx, access, id);
    if (!(await deleteFileRow(trx, id, clock.now()))) throw notFound();
    return { file: found, parts: await findParts(trx, id) };
  });
  await storage.delete(file.path);
  for (const part of parts) if (part.receivedSha256Hex) await storage.delete(partKeyOf(file, part.number));
}

/**
 * Refuses (422, one issue per bad id, at `loc` + index) ids that are not live, uploaded files of the
 * organization for `service`: what a downloadables benefit or a product's medias may point at.
 */
export async function assertUsableFiles(
  db: Database,
  input: { organizationId: string; ids: readonly string[]; service: FileService; loc: (string | number)[] },
): Promise<void> {
  const usable = await findUsableFileIds(db, input.organizationId, input.ids, input.service);
  const issues = input.ids.flatMap((id, index) =>
    usable.has(id) ? [] : [{ loc: [...input.loc, index], msg: `No uploaded ${input.service} file with this id in the organization`, type: 'value_error' }],
  );
  if (issues.length > 0) throw new CoreError('invalid', 'FILE_NOT_USABLE', 'Some files cannot be used here', issues);
}

/** The bytes of an uploaded product media or avatar file, which anyone may fetch. */
export async function openPublicFile(db: Database, storage: FileStorage, id: string): Promise<{ file: FileRecord; body: Readable }> {
  const file = await findUploadedFile(db, id, [...PUBLIC_SERVICES]);
  const body = file ? await storage.get(file.path) : undefined;
  if (!file || !body) throw notFound();
  return { file, body };
}
