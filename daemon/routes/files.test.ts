import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Polar } from '@polar-sh/sdk';
import type { FileUpload } from '@polar-sh/sdk/models/components/fileupload.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { NotPermitted } from '@polar-sh/sdk/models/errors/notpermitted.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk } from '../testing/v1.js';

const MAX_FILE_SIZE = 2 * 1024 * 1024;

let daemon: TestDaemon;
let dataDir: string;
let owner: SignedIn;
let organizationId: string;

const sdk = (accessToken: string) => polarSdk(daemon.url, accessToken);
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('base64');

type Service = 'downloadable' | 'product_media' | 'organization_avatar';

/** Creates a file cut into parts of `partSize` bytes, each with its checksum, as Polar's web client does. */
function createFile(token: string, bytes: Uint8Array, options: { service?: Service; name?: string; mimeType?: string; partSize?: number; checksum?: string } = {}) {
  const partSize = options.partSize ?? bytes.length;
  const count = Math.max(1, Math.ceil(bytes.length / partSize));
  const parts = Array.from({ length: count }, (_, i) => ({
    number: i + 1,
    chunkStart: i * partSize,
    chunkEnd: Math.min((i + 1) * partSize, bytes.length),
    checksumSha256Base64: sha256(bytes.subarray(i * partSize, (i + 1) * partSize)),
  }));
  return sdk(token).files.create({
    organizationId,
    service: options.service ?? 'downloadable',
    name: options.name ?? 'book.pdf',
    mimeType: options.mimeType ?? 'application/pdf',
    size: bytes.length,
    checksumSha256Base64: options.checksum ?? sha256(bytes),
    upload: { parts },
  } as Parameters<Polar['files']['create']>[0]);
}

/** PUTs each part's bytes to its URL, as the SDK's caller does (no bearer: the URL is the credential). */
async function putParts(upload: FileUpload, bytes: Uint8Array): Promise<string[]> {
  const etags: string[] = [];
  for (const part of upload.upload.parts) {
    const res = await fetch(part.url, { method: 'PUT', body: Buffer.from(bytes.subarray(part.chunkStart, part.chunkEnd)), headers: part.headers });
    expect(res.status).toBe(200);
    etags.push(res.headers.get('etag')!);
  }
  return etags;
}

function completed(upload: FileUpload, etags: string[], bytes: Uint8Array) {
  return {
    id: upload.id,
    fileUploadCompleted: {
      id: upload.upload.id,
      path: upload.upload.path,
      parts: upload.upload.parts.map((part, i) => ({ number: part.number, checksumEtag: etags[i], checksumSha256Base64: sha256(bytes.subarray(part.chunkStart, part.chunkEnd)) })),
    },
  };
}

async function uploadFile(bytes: Uint8Array, options: Parameters<typeof createFile>[2] = {}) {
  const upload = await createFile(owner.token, bytes, options);
  const etags = await putParts(upload, bytes);
  return sdk(owner.token).files.uploaded(completed(upload, etags, bytes));
}

const fileCount = async () => Number((await daemon.db('files').count({ n: '*' }))[0].n);

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'till-files-'));
  daemon = await startTestDaemon({ TILL_DATA_DIR: dataDir, TILL_MAX_FILE_SIZE: String(MAX_FILE_SIZE) });
  owner = await signUp(daemon.url, { name: 'Fiona Files' });
  organizationId = await createOrganization(owner, 'Files Co');
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/files', () => {
  it('answers 401 to a call without credentials, and 404 to an upload URL nobody handed out', async () => {
    const res = await fetch(`${daemon.url}/v1/files/`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'Unauthorized' });
    const put = await fetch(`${daemon.url}/v1/files/upload/${randomUUID()}/1?token=${randomBytes(32).toString('base64url')}`, { method: 'PUT', body: 'x' });
    expect(put.status).toBe(404);
    expect(await put.json()).toMatchObject({ error: 'ResourceNotFound', code: 'UPLOAD_NOT_FOUND' });
  });

  it('uploads a file in two parts through create, PUT and uploaded, verified and stored under the data directory', async () => {
    const bytes = randomBytes(3000);
    const upload = await createFile(owner.token, bytes, { partSize: 2048 });
    expect(upload).toMatchObject({ organizationId, name: 'book.pdf', size: 3000, isUploaded: false, service: 'downloadable', sizeReadable: '2.9 KB', checksumSha256Base64: sha256(bytes) });
    expect(upload.checksumSha256Hex).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(upload.upload.parts.map((part) => [part.number, part.chunkStart, part.chunkEnd])).toEqual([[1, 0, 2048], [2, 2048, 3000]]);
    expect(upload.upload.parts[0].url).toMatch(new RegExp(`^${daemon.url}/v1/files/upload/${upload.id}/1\\?token=[\\w-]{43}$`));
    expect(upload.upload.parts[0].expiresAt.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);

    const etags = await putParts(upload, bytes);
    // The token is the URL's only credential; request logs leave it out.
    expect(JSON.stringify(daemon.logs)).toContain(`/v1/files/upload/${upload.id}/1`);
    expect(JSON.stringify(daemon.logs)).not.toContain(new URL(upload.upload.parts[0].url).searchParams.get('token'));
    expect(etags[0]).toBe(`"${createHash('sha256').update(bytes.subarray(0, 2048)).digest('hex')}"`);
    const file = await sdk(owner.token).files.uploaded(completed(upload, etags, bytes));
    expect(file).toMatchObject({ id: upload.id, isUploaded: true, service: 'downloadable', size: 3000, checksumSha256Base64: sha256(bytes) });
    expect(file.checksumEtag).toMatch(/^"[0-9a-f]{64}-2"$/);
    expect(file.lastModifiedAt).toBeInstanceOf(Date);
    expect('publicUrl' in file).toBe(false);

    const stored = join(dataDir, 'files', ...upload.path.split('/'));
    expect(readFileSync(stored).equals(bytes)).toBe(true);
    expect(existsSync(`${stored}.part-1`)).toBe(false);
    const page = await sdk(owner.token).files.list({ organizationId, ids: [upload.id] });
    expect(page.result.items.map((item) => item.id)).toEqual([upload.id]);
  });

  it('refuses to complete an upload whose bytes do not match the declared SHA-256, and the file stays not uploaded', async () => {
    const bytes = randomBytes(1000);
    const upload = await createFile(owner.token, bytes, { checksum: sha256(randomBytes(1000)) });
    const etags = await putParts(upload, bytes);
    const error = await sdk(owner.token).files.uploaded(completed(upload, etags, bytes)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0]?.msg).toMatch(/SHA-256 of the uploaded bytes/);
    const row = await daemon.db('files').where({ id: upload.id }).first();
    expect(Boolean(row.is_uploaded)).toBe(false);
    expect(existsSync(join(dataDir, 'files', ...upload.path.split('/')))).toBe(false);
    expect((await sdk(owner.token).files.list({ organizationId, ids: [upload.id] })).result.items).toEqual([]);
  });

  it('refuses to complete an upload whose parts hold fewer bytes than the declared size', async () => {
    const bytes = randomBytes(1000);
    const upload = await createFile(owner.token, bytes, { partSize: 500 });
    const first = await fetch(upload.upload.parts[0].url, { method: 'PUT', body: bytes.subarray(0, 500) });
    const error = await sdk(owner.token)
      .files.uploaded({ id: upload.id, fileUploadCompleted: { id: upload.upload.id, path: upload.upload.path, parts: [{ number: 1, checksumEtag: first.headers.get('etag')!, checksumSha256Base64: null }] } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0]).toMatchObject({ loc: ['body', 'parts'], msg: expect.stringContaining('500 bytes') });
    expect(Boolean((await daemon.db('files').where({ id: upload.id }).first()).is_uploaded)).toBe(false);
  });

  it('refuses a completion naming an ETag the part did not answer, or a part never uploaded', async () => {
    const bytes = randomBytes(100);
    const upload = await createFile(owner.token, bytes, { partSize: 50 });
    await fetch(upload.upload.parts[0].url, { method: 'PUT', body: bytes.subarray(0, 50) });
    const error = await sdk(owner.token)
      .files.uploaded({
        id: upload.id,
        fileUploadCompleted: {
          id: upload.upload.id,
          path: upload.upload.path,
          parts: [{ number: 1, checksumEtag: '"deadbeef"', checksumSha256Base64: null }, { number: 2, checksumEtag: '"x"', checksumSha256Base64: null }],
        },
      })
      .catch((e: unknown) => e);
    expect((error as HTTPValidationError).detail?.map((issue) => issue.loc)).toEqual([['body', 'parts', 0, 'checksum_etag'], ['body', 'parts', 1, 'number']]);
  });

  it('refuses part bytes beyond the file size or not matching the part checksum, keeping nothing', async () => {
    const bytes = randomBytes(100);
    const upload = await createFile(owner.token, bytes);
    const tooLarge = await fetch(upload.upload.parts[0].url, { method: 'PUT', body: randomBytes(101) });
    expect(tooLarge.status).toBe(422);
    expect(await tooLarge.json()).toMatchObject({ error: 'RequestValidationError', code: 'PART_TOO_LARGE' });
    // Sent chunked, without a Content-Length to refuse it by: counted as it streams.
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(randomBytes(60));
        controller.enqueue(randomBytes(41));
        controller.close();
      },
    });
    const streamed = await fetch(upload.upload.parts[0].url, { method: 'PUT', body: chunked, duplex: 'half' } as RequestInit);
    expect(streamed.status).toBe(422);
    expect(await streamed.json()).toMatchObject({ code: 'PART_TOO_LARGE' });
    const wrong = await fetch(upload.upload.parts[0].url, { method: 'PUT', body: randomBytes(100) });
    expect(wrong.status).toBe(422);
    expect(await wrong.json()).toMatchObject({ code: 'PART_CHECKSUM_MISMATCH' });
    expect(existsSync(join(dataDir, 'files', ...upload.path.split('/')) + '.part-1')).toBe(false);
    expect((await fetch(upload.upload.parts[0].url.replace('/1?', '/2?'), { method: 'PUT', body: 'x' })).status).toBe(404);
    // The token opens this file's upload only.
    const other = await createFile(owner.token, bytes);
    expect((await fetch(upload.upload.parts[0].url.replace(upload.id, other.id), { method: 'PUT', body: bytes })).status).toBe(404);
  });

  it('answers 409 to a PUT once the file is uploaded', async () => {
    const bytes = randomBytes(10);
    const upload = await createFile(owner.token, bytes);
    const etags = await putParts(upload, bytes);
    await sdk(owner.token).files.uploaded(completed(upload, etags, bytes));
    const again = await fetch(upload.upload.parts[0].url, { method: 'PUT', body: bytes });
    expect(again.status).toBe(409);
  });

  it('serves product media at its public_url to anyone, and no downloadable', async () => {
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(200)]);
    const media = await uploadFile(png, { service: 'product_media', name: 'cover.png', mimeType: 'image/png' });
    expect(media.service).toBe('product_media');
    const publicUrl = (media as { publicUrl: string }).publicUrl;
    expect(publicUrl).toBe(`${daemon.url}/files/public/${media.id}`);
    const res = await fetch(publicUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(res.headers.get('content-security-policy')).toContain('sandbox');
    expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);

    const download = await uploadFile(randomBytes(10));
    expect((await fetch(`${daemon.url}/files/public/${download.id}`)).status).toBe(404);
  });

  it('refuses with a 422 naming the field a non-image media, an avatar over 1 MB and a file over TILL_MAX_FILE_SIZE, creating nothing', async () => {
    const before = await fileCount();
    const attempt = (body: Record<string, unknown>) =>
      sdk(owner.token)
        .files.create({ organizationId, name: 'x', mimeType: 'image/png', size: 10, upload: { parts: [{ number: 1, chunkStart: 0, chunkEnd: 10 }] }, service: 'product_media', ...body } as Parameters<Polar['files']['create']>[0])
        .then(
          () => expect.fail('accepted'),
          (e: unknown) => e as HTTPValidationError,
        );
    expect((await attempt({ mimeType: 'application/pdf' })).detail?.[0]).toMatchObject({ loc: ['body', 'mime_type'], msg: expect.stringContaining('image/png') });
    expect((await attempt({ service: 'organization_avatar', size: 1024 * 1024 + 1 })).detail?.[0]).toMatchObject({ loc: ['body', 'size'], msg: expect.stringContaining('1.0 MB') });
    expect((await attempt({ service: 'downloadable', mimeType: 'application/zip', size: MAX_FILE_SIZE + 1 })).detail?.[0]).toMatchObject({ loc: ['body', 'size'], msg: expect.stringContaining('2.0 MB') });
    expect((await attempt({ service: 'support_case_attachment' })).detail?.[0]?.loc).toEqual(['body', 'service']);
    expect((await attempt({ checksumSha256Base64: 'not base64' })).detail?.[0]?.loc).toEqual(['body', 'checksum_sha256_base64']);
    expect(await fileCount()).toBe(before);
  });

  it('renames a file and changes its version; null clears the version', async () => {
    const file = await uploadFile(randomBytes(10));
    const renamed = await sdk(owner.token).files.update({ id: file.id, filePatch: { name: 'Manual v2.pdf', version: '2.0' } });
    expect(renamed).toMatchObject({ name: 'Manual v2.pdf', version: '2.0', isUploaded: true });
    const cleared = await sdk(owner.token).files.update({ id: file.id, filePatch: { name: null, version: null } });
    expect(cleared).toMatchObject({ name: 'Manual v2.pdf', version: null });
  });

  it('deletes a file (204): its bytes are gone and it is not found any more', async () => {
    const media = await uploadFile(randomBytes(20), { service: 'product_media', name: 'a.webp', mimeType: 'image/webp' });
    const stored = join(dataDir, 'files', ...media.path.split('/'));
    expect(existsSync(stored)).toBe(true);
    await sdk(owner.token).files.delete({ id: media.id });
    expect(existsSync(stored)).toBe(false);
    expect((await fetch(`${daemon.url}/files/public/${media.id}`)).status).toBe(404);
    await expect(sdk(owner.token).files.delete({ id: media.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(sdk(owner.token).files.update({ id: media.id, filePatch: { name: 'b' } })).rejects.toBeInstanceOf(ResourceNotFound);
  });

  it('shows another organization nothing: its files are not listed and are not found', async () => {
    const file = await uploadFile(randomBytes(10));
    const stranger = await signUp(daemon.url);
    const strangerOrg = await createOrganization(stranger, 'Elsewhere');
    expect((await sdk(stranger.token).files.list({ organizationId })).result.items).toEqual([]);
    expect((await sdk(stranger.token).files.list({})).result.items).toEqual([]);
    await expect(sdk(stranger.token).files.update({ id: file.id, filePatch: { name: 'mine' } })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(sdk(stranger.token).files.delete({ id: file.id })).rejects.toBeInstanceOf(ResourceNotFound);
    const upload = await createFile(owner.token, Buffer.from('abc'));
    await expect(sdk(stranger.token).files.uploaded(completed(upload, ['"x"'], Buffer.from('abc')))).rejects.toBeInstanceOf(ResourceNotFound);
    const res = await fetch(`${daemon.url}/v1/files/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stranger.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ organization_id: organizationId, service: 'downloadable', name: 'x', mime_type: 'text/plain', size: 1, upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: 1 }] } }),
    });
    expect(res.status).toBe(422);
    expect(strangerOrg).not.toBe(organizationId);
  });

  it('lets a member list files but not create, complete, update or delete them', async () => {
    const file = await uploadFile(randomBytes(10));
    const member = await signUp(daemon.url, { name: 'Max Member' });
    await daemon.auth.api.addMember({ body: { userId: member.user.id, organizationId, role: 'member' } });
    expect((await sdk(member.token).files.list({ organizationId, ids: [file.id] })).result.items).toHaveLength(1);
    const created = await createFile(member.token, Buffer.from('abc')).catch((e: unknown) => e);
    expect(created).toBeInstanceOf(SDKError);
    expect((created as SDKError).statusCode).toBe(403);
    await expect(sdk(member.token).files.update({ id: file.id, filePatch: { name: 'member' } })).rejects.toBeInstanceOf(NotPermitted);
    await expect(sdk(member.token).files.delete({ id: file.id })).rejects.toBeInstanceOf(NotPermitted);
    const upload = await createFile(owner.token, Buffer.from('abc'));
    await expect(sdk(member.token).files.uploaded(completed(upload, ['"x"'], Buffer.from('abc')))).rejects.toBeInstanceOf(NotPermitted);
  });

  it('lets an access token with files:read list files but not create one', async () => {
    const res = await fetch(`${daemon.url}/v1/organization-access-tokens/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ organization_id: organizationId, comment: 'ci', scopes: ['files:read'] }),
    });
    const { token } = await res.json();
    expect((await sdk(token).files.list({})).result.pagination.totalCount).toBeGreaterThan(0);
    const error = await createFile(token, Buffer.from('abc')).catch((e: unknown) => e);
    expect((error as SDKError).statusCode).toBe(403);
  });
});

describe('an upload in many parts', () => {
  it('accepts 10 000 parts (the most an upload may have) on both databases', async () => {
    const parts = Array.from({ length: 10_000 }, (_, i) => ({ number: i + 1, chunk_start: i, chunk_end: i + 1 }));
    const res = await fetch(`${daemon.url}/v1/files/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ organization_id: organizationId, service: 'downloadable', name: 'many.bin', mime_type: 'application/octet-stream', size: 10_000, upload: { parts } }),
    });
    expect(res.status).toBe(201);
    expect((await res.json()).upload.parts).toHaveLength(10_000);
  });
});
