import { z } from 'zod';

/** What a file is for. Polar's fourth service, support_case_attachment, has no use in Till. */
export const FILE_SERVICES = ['downloadable', 'product_media', 'organization_avatar'] as const;
export type FileService = (typeof FILE_SERVICES)[number];

/** Services whose files anyone may fetch (checkout pages, avatars): they get a `public_url`. */
export const PUBLIC_SERVICES: ReadonlySet<FileService> = new Set(['product_media', 'organization_avatar']);

const IMAGE_MIME_TYPES = /^image\/(jpeg|png|gif|webp|svg\+xml)$/;

/** Polar's per-service limits; TILL_MAX_FILE_SIZE caps every service on top of them. */
export const SERVICE_LIMITS: Record<FileService, { maxSize?: number; mimeTypes?: RegExp; mimeHint?: string }> = {
  downloadable: {},
  product_media: { maxSize: 10 * 1024 * 1024, mimeTypes: IMAGE_MIME_TYPES, mimeHint: 'image/jpeg, image/png, image/gif, image/webp or image/svg+xml' },
  organization_avatar: { maxSize: 1024 * 1024, mimeTypes: IMAGE_MIME_TYPES, mimeHint: 'image/jpeg, image/png, image/gif, image/webp or image/svg+xml' },
};

/** The largest file tilld accepts unless TILL_MAX_FILE_SIZE says otherwise: 1 GiB. */
export const DEFAULT_MAX_FILE_SIZE = 1024 * 1024 * 1024;

/** Polar's (S3's) limit on the parts of one upload. */
export const MAX_UPLOAD_PARTS = 10_000;

const Sha256Base64 = z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'Expected a SHA-256 digest in base64 (44 characters)');

const PartNumber = z.number().int().min(1).max(MAX_UPLOAD_PARTS);

const FileCreatePart = z
  .object({
    number: PartNumber,
    chunk_start: z.number().int().min(0),
    chunk_end: z.number().int().min(0),
    checksum_sha256_base64: Sha256Base64.nullish(),
  })
  .refine((part) => part.chunk_end >= part.chunk_start, { message: 'chunk_end must not come before chunk_start', path: ['chunk_end'] });

const uniqueNumbers = (parts: readonly { number: number }[]) => new Set(parts.map((part) => part.number)).size === parts.length;

/** POST /v1/files/: a file's description and the parts its bytes will be uploaded in. */
export const FileCreate = z.object({
  service: z.enum(FILE_SERVICES, { error: `Expected one of ${FILE_SERVICES.join(', ')}` }),
  organization_id: z.string().min(1).nullish(),
  name: z.string().min(1).max(255),
  mime_type: z.string().regex(/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+$/, 'Expected a MIME type such as image/png'),
  size: z.number().int().min(0),
  checksum_sha256_base64: Sha256Base64.nullish(),
  upload: z.object({
    parts: z.array(FileCreatePart).min(1).max(MAX_UPLOAD_PARTS).refine(uniqueNumbers, 'Part numbers must be unique'),
  }),
  version: z.string().max(255).nullish(),
});
export type FileCreate = z.infer<typeof FileCreate>;

/** POST /v1/files/{id}/uploaded: the upload's id and path, and each part with the ETag its PUT answered. */
export const FileUploadCompleted = z.object({
  id: z.string().min(1),
  path: z.string().min(1),
  parts: z
    .array(z.object({ number: PartNumber, checksum_etag: z.string().min(1), checksum_sha256_base64: Sha256Base64.nullish() }))
    .min(1)
    .max(MAX_UPLOAD_PARTS)
    .refine(uniqueNumbers, 'Part numbers must be unique'),
});
export type FileUploadCompleted = z.infer<typeof FileUploadCompleted>;

/** PATCH /v1/files/{id}: `null` leaves the name as it is and clears the version. */
export const FileUpdate = z.object({
  name: z.string().min(1).max(255).nullish(),
  version: z.string().max(255).nullish(),
});
export type FileUpdate = z.infer<typeof FileUpdate>;

/** A file as core knows it. */
export interface FileRecord {
  id: string;
  organizationId: string;
  service: FileService;
  name: string;
  /** Where its bytes are kept in the file storage, and the `path` of the wire format. */
  path: string;
  mimeType: string;
  size: number;
  version: string | null;
  checksumSha256Base64: string | null;
  checksumEtag: string | null;
  storageVersion: string | null;
  lastModifiedAt: Date | null;
  isUploaded: boolean;
  uploadId: string;
  createdAt: Date;
  modifiedAt: Date | null;
}

/** One part of an upload, as declared, and what arrived for it. */
export interface UploadPart {
  number: number;
  chunkStart: number;
  chunkEnd: number;
  checksumSha256Base64: string | null;
  /** SHA-256 (hex) of the bytes received, which is also the part's ETag; null until they arrive. */
  receivedSha256Hex: string | null;
  receivedSize: number | null;
}

/** The storage key of a file's bytes and of each of its parts while they wait to be assembled. */
export const storageKeyOf = (organizationId: string, fileId: string) => `${organizationId}/${fileId}`;
export const partKeyOf = (file: Pick<FileRecord, 'path'>, number: number) => `${file.path}.part-${number}`;
