import { PUBLIC_SERVICES, type FileRecord, type UploadPart } from './schema.js';

/** Polar's `size_readable`: 1024-based units with one decimal ("1.2 KB", "500.0 B"). */
export function sizeReadable(bytes: number): string {
  let value = bytes;
  for (const unit of ['', 'K', 'M', 'G', 'T', 'P', 'E', 'Z']) {
    if (Math.abs(value) < 1024) return `${value.toFixed(1)} ${unit}B`;
    value /= 1024;
  }
  return `${value.toFixed(1)} YiB`;
}

/** Where anyone may fetch an uploaded product media or avatar file. */
export const publicFileUrl = (baseUrl: string, fileId: string) => `${baseUrl}/files/public/${fileId}`;

/**
 * The upload URL of one part: the token is its only credential, as in an S3 presigned URL. It rides in the
 * query string, which request logs leave out.
 */
export const uploadPartUrl = (baseUrl: string, fileId: string, token: string, partNumber: number) =>
  `${baseUrl}/v1/files/upload/${fileId}/${partNumber}?token=${token}`;

const hexOf = (base64: string | null) => (base64 === null ? null : Buffer.from(base64, 'base64').toString('hex'));

function fileFields(file: FileRecord) {
  return {
    id: file.id,
    organization_id: file.organizationId,
    name: file.name,
    path: file.path,
    mime_type: file.mimeType,
    size: file.size,
    storage_version: file.storageVersion,
    checksum_etag: file.checksumEtag,
    checksum_sha256_base64: file.checksumSha256Base64,
    checksum_sha256_hex: hexOf(file.checksumSha256Base64),
    last_modified_at: file.lastModifiedAt?.toISOString() ?? null,
    version: file.version,
    service: file.service,
    is_uploaded: file.isUploaded,
    // Till runs no malware scan, so nothing is ever flagged.
    flagged_malicious_at: null,
    size_readable: sizeReadable(file.size),
  };
}

/** Polar's FileRead (the one place its wire shape is written); `public_url` for public services only. */
export function serializeFile(file: FileRecord, baseUrl: string) {
  const read = { ...fileFields(file), created_at: file.createdAt.toISOString() };
  return PUBLIC_SERVICES.has(file.service) ? { ...read, public_url: publicFileUrl(baseUrl, file.id) } : read;
}
export type FileWire = ReturnType<typeof serializeFile>;

/** Polar's FileUpload: the file, and where to PUT each part. */
export function serializeFileUpload(created: { file: FileRecord; parts: UploadPart[]; uploadToken: string; expiresAt: Date }, baseUrl: string) {
  return {
    ...fileFields(created.file),
    upload: {
      id: created.file.uploadId,
      path: created.file.path,
      parts: created.parts.map((part) => ({
        number: part.number,
        chunk_start: part.chunkStart,
        chunk_end: part.chunkEnd,
        checksum_sha256_base64: part.checksumSha256Base64,
        url: uploadPartUrl(baseUrl, created.file.id, created.uploadToken, part.number),
        expires_at: created.expiresAt.toISOString(),
        headers: {},
      })),
    },
  };
}
