import { stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { CliError, EXIT } from '../../errors.js';
import { canPrompt, missingArgument, openPrompter } from '../../input/prompt.js';
import type { Env, Streams } from '../../output.js';
import { done as summarize } from '../../resources/item.js';
import { openSession, organizationId } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';
import { createProgress } from '../../ui/progress.js';
import { checksums, partsOf, putPart, type PartRange } from './transfer.js';

export const FILE_SERVICES = ['downloadable', 'product_media', 'organization_avatar'] as const;

export interface UploadOptions {
  server?: string;
  json?: boolean;
  org?: string;
  service?: string;
  name?: string;
  mimeType?: string;
  fileVersion?: string;
}

const MIME_TYPES: Record<string, string> = {
  '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp', '.svg': 'image/svg+xml',
  '.pdf': 'application/pdf', '.zip': 'application/zip', '.gz': 'application/gzip', '.tar': 'application/x-tar', '.json': 'application/json',
  '.txt': 'text/plain', '.md': 'text/markdown', '.csv': 'text/csv', '.html': 'text/html', '.epub': 'application/epub+zip',
  '.mp3': 'audio/mpeg', '.wav': 'audio/wav', '.mp4': 'video/mp4', '.mov': 'video/quicktime', '.webm': 'video/webm',
};

/** Guessed from the extension; anything unknown is application/octet-stream (give --mime-type to say better). */
export const mimeTypeOf = (path: string) => MIME_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';

interface FileUpload extends ApiObject {
  id: string;
  upload: { id: string; path: string; parts: (PartRange & { url: string; headers?: Record<string, string> })[] };
}

/** `till files upload PATH`: create the file, PUT its parts to the URLs the API returns, mark it uploaded. */
export async function uploadFile(path: string | undefined, options: UploadOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const file = path ?? (await askForPath(streams));
  const size = await sizeOf(file);
  const service = options.service ?? 'downloadable';
  if (!(FILE_SERVICES as readonly string[]).includes(service)) {
    throw new CliError('INVALID_FLAG', `--service "${service}": expected one of ${FILE_SERVICES.join(', ')}.`, EXIT.invalid);
  }
  const ranges = partsOf(size);
  const sums = await checksums(file, ranges);
  const org = await organizationId(session, options.org);
  const body = {
    service,
    ...(org ? { organization_id: org } : {}),
    name: options.name ?? basename(file),
    mime_type: options.mimeType ?? mimeTypeOf(file),
    size,
    checksum_sha256_base64: sums.whole,
    upload: { parts: ranges.map((range, index) => ({ ...range, checksum_sha256_base64: sums.parts[index] })) },
    ...(options.fileVersion ? { version: options.fileVersion } : {}),
  };
  const flagOf = (field: string) => ({ organization_id: '--org', name: '--name', mime_type: '--mime-type', service: '--service', version: '--file-version' })[field];
  const created = await session.api.request<FileUpload>('POST', '/v1/files/', { body, flagOf });

  const progress = createProgress(streams.stderr, `Uploading ${body.name}`, size, { enabled: !session.out.json });
  let done = 0;
  const parts = [];
  for (const part of created.upload.parts) {
    const etag = await putPart(part.url, file, part, part.headers ?? {}, (bytes) => progress.update((done += bytes)));
    parts.push({ number: part.number, checksum_etag: etag, checksum_sha256_base64: sums.parts[part.number - 1] ?? null });
  }
  progress.finish();
  const uploaded = await session.api.request<ApiObject>('POST', `/v1/files/${encodeURIComponent(created.id)}/uploaded`, { body: { id: created.upload.id, path: created.upload.path, parts } });
  summarize(session, uploaded, `Uploaded ${body.name} (${String(uploaded.size_readable)}) as file ${created.id}.`);
  return EXIT.ok;
}

async function sizeOf(file: string): Promise<number> {
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new CliError('INVALID_ARGUMENT', `${file} is not a file.`, EXIT.invalid);
    return info.size;
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as { code?: string }).code;
    throw new CliError('INVALID_ARGUMENT', `Cannot read ${file} (${code === 'ENOENT' ? 'no such file' : code ?? String(error)}).`, EXIT.invalid);
  }
}

async function askForPath(streams: Streams): Promise<string> {
  if (!canPrompt(streams)) throw missingArgument(['the <path> argument'], 'upload a file');
  return (await openPrompter(streams)).text('File to upload');
}
