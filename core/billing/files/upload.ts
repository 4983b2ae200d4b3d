import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { findFile, findFileByUploadToken, findParts, markUploaded, recordPartReceived } from './repository.js';
import { partKeyOf, type FileRecord, type FileUploadCompleted, type UploadPart } from './schema.js';
import { hashUploadToken, notFound, writableFile, type FileAccess } from './service.js';
import type { FileStorage } from './storage.js';

const hexToBase64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

const invalid = (code: string, message: string, issues: { loc: (string | number)[]; msg: string }[]) =>
  new CoreError('invalid', code, message, issues.map((issue) => ({ ...issue, type: 'value_error' })));

/**
 * Stores the bytes of one part, PUT to the URL `createFile` handed out (the token in it is the only
 * credential), and answers the part's ETag. The parts of a file together may not exceed its declared
 * size, and a part must match the checksum declared for it.
 */
export async function receivePart(
  db: Database,
  clock: Clock,
  storage: FileStorage,
  input: { fileId: string; token: string; partNumber: number; body: AsyncIterable<Buffer>; declaredLength?: number },
): Promise<{ etag: string }> {
  const found = await findFileByUploadToken(db, hashUploadToken(input.token));
  if (!found || found.file.id !== input.fileId) throw new CoreError('not_found', 'UPLOAD_NOT_FOUND', 'No upload at this URL');
  const { file, expiresAt } = found;
  if (file.isUploaded) throw new CoreError('conflict', 'FILE_ALREADY_UPLOADED', 'This file is already uploaded');
  if (expiresAt <= clock.now()) throw new CoreError('forbidden', 'UPLOAD_URL_EXPIRED', 'This upload URL has expired: create the file again');
  const parts = await findParts(db, file.id);
  const part = parts.find((candidate) => candidate.number === input.partNumber);
  if (!part) throw new CoreError('not_found', 'UPLOAD_PART_NOT_FOUND', `This upload has no part ${input.partNumber}`);

  const allowance = file.size - parts.reduce((sum, other) => (other.number === part.number ? sum : sum + (other.receivedSize ?? 0)), 0);
  const tooLarge = () =>
    invalid('PART_TOO_LARGE', 'The parts would exceed the size of the file', [
      { loc: ['body'], msg: `The parts of this file may hold ${file.size} bytes in all; ${allowance} are left for part ${part.number}` },
    ]);
  if (input.declaredLength !== undefined && input.declaredLength > allowance) throw tooLarge();

  const hash = createHash('sha256');
  let size = 0;
  async function* metered() {
    for await (const chunk of input.body) {
      size += chunk.length;
      if (size > allowance) throw tooLarge();
      hash.update(chunk);
      yield chunk;
    }
  }
  const key = partKeyOf(file, part.number);
  await storage.put(key, Readable.from(metered()));
  const sha256Hex = hash.digest('hex');
  if (part.checksumSha256Base64 && hexToBase64(sha256Hex) !== part.checksumSha256Base64) {
    await storage.delete(key);
    await recordPartReceived(db, file.id, part.number, null);
    throw invalid('PART_CHECKSUM_MISMATCH', 'The bytes do not match the checksum declared for this part', [
      { loc: ['body'], msg: `The SHA-256 of the bytes received is ${hexToBase64(sha256Hex)}, not ${part.checksumSha256Base64}` },
    ]);
  }
  await recordPartReceived(db, file.id, part.number, { sha256Hex, size, at: clock.now() });
  return { etag: `"${sha256Hex}"` };
}

/** The uploaded parts the completion names, in order; every mismatch is a 422 issue. */
function chosenParts(stored: readonly UploadPart[], claimed: FileUploadCompleted['parts']): UploadPart[] {
  const issues: { loc: (string | number)[]; msg: string }[] = [];
  const chosen: UploadPart[] = [];
  claimed.forEach((claim, index) => {
    const part = stored.find((candidate) => candidate.number === claim.number);
    if (!part?.receivedSha256Hex) issues.push({ loc: ['body', 'parts', index, 'number'], msg: 'No bytes were uploaded for this part' });
    else if (claim.checksum_etag.replace(/"/g, '') !== part.receivedSha256Hex) {
      issues.push({ loc: ['body', 'parts', index, 'checksum_etag'], msg: 'Not the ETag the upload of this part answered' });
    } else if (claim.checksum_sha256_base64 && claim.checksum_sha256_base64 !== hexToBase64(part.receivedSha256Hex)) {
      issues.push({ loc: ['body', 'parts', index, 'checksum_sha256_base64'], msg: 'Not the SHA-256 of the bytes uploaded for this part' });
    } else chosen.push(part);
  });
  if (issues.length > 0) throw invalid('UPLOAD_PARTS_INVALID', 'The parts do not match what was uploaded', issues);
  return chosen.sort((a, b) => a.number - b.number);
}

/**
 * Completes an upload: assembles the named parts into the file, verifies its size and, when one was
 * declared, its SHA-256 (a mismatch is a 422 and the file stays not uploaded), then marks it uploaded.
 * Completing a file already uploaded answers it as it is.
 */
export async function completeUpload(
  db: Database,
  clock: Clock,
  storage: FileStorage,
  access: FileAccess,
  id: string,
  input: FileUploadCompleted,
): Promise<FileRecord> {
  const file = await writableFile(db, access, id);
  if (file.isUploaded) return file;
  if (input.id !== file.uploadId) throw invalid('UPLOAD_MISMATCH', 'Not this file’s upload', [{ loc: ['body', 'id'], msg: 'Expected the upload.id answered when the file was created' }]);
  if (input.path !== file.path) throw invalid('UPLOAD_MISMATCH', 'Not this file’s upload', [{ loc: ['body', 'path'], msg: 'Expected the upload.path answered when the file was created' }]);
  const stored = await findParts(db, id);
  const parts = chosenParts(stored, input.parts);

  const hash = createHash('sha256');
  let size = 0;
  async function* assembled() {
    for (const part of parts) {
      const body = await storage.get(partKeyOf(file, part.number));
      if (!body) throw invalid('UPLOAD_PARTS_INVALID', 'A part is missing', [{ loc: ['body', 'parts'], msg: `The bytes of part ${part.number} are gone: upload it again` }]);
      for await (const chunk of body as AsyncIterable<Buffer>) {
        size += chunk.length;
        // Past the declared size there is nothing left to learn; stop reading.
        if (size > file.size) break;
        hash.update(chunk);
        yield chunk;
      }
      if (size > file.size) return;
    }
  }
  await storage.put(file.path, Readable.from(assembled()));
  const sha256 = hash.digest('base64');
  if (size !== file.size) {
    await storage.delete(file.path);
    throw invalid('FILE_SIZE_MISMATCH', 'The uploaded bytes do not have the size of the file', [
      { loc: ['body', 'parts'], msg: `The parts hold ${size > file.size ? `more than ${file.size}` : size} bytes; the file was created with size ${file.size}` },
    ]);
  }
  if (file.checksumSha256Base64 && sha256 !== file.checksumSha256Base64) {
    await storage.delete(file.path);
    throw invalid('FILE_CHECKSUM_MISMATCH', 'The uploaded bytes do not match the file’s checksum', [
      { loc: ['body'], msg: `The SHA-256 of the uploaded bytes is ${sha256}, not the checksum_sha256_base64 ${file.checksumSha256Base64} the file was created with` },
    ]);
  }

  const now = clock.now();
  const checksumEtag = `"${createHash('sha256').update(parts.map((part) => part.receivedSha256Hex).join('')).digest('hex')}-${parts.length}"`;
  if (!(await markUploaded(db, id, { checksumSha256Base64: sha256, checksumEtag, at: now }))) {
    // Completed by a concurrent call (same bytes), or deleted meanwhile (then its bytes must go too).
    const current = await findFile(db, id, access.read);
    if (current?.isUploaded) return current;
    await storage.delete(file.path);
    throw notFound();
  }
  for (const part of stored) if (part.receivedSha256Hex) await storage.delete(partKeyOf(file, part.number));
  return { ...file, isUploaded: true, checksumSha256Base64: sha256, checksumEtag, lastModifiedAt: now, modifiedAt: now };
}
