import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, tillOnTerminal, type Seller } from '../../testing/catalog.js';
import { tempConfigDir, till } from '../../testing/till.js';
import { PART_SIZE, partsOf } from './transfer.js';

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'File Shop');
});
afterAll(() => daemon?.close());

function localFile(name: string, bytes: Buffer): string {
  const path = join(tempConfigDir(), name);
  writeFileSync(path, bytes);
  return path;
}

describe('till files upload', () => {
  it('uploads a file in one part and answers the uploaded file, its SHA-256 computed locally', async () => {
    const bytes = randomBytes(3000);
    const file = await tillJson(['files', 'upload', localFile('notes.txt', bytes)], acme.env);
    expect(file).toMatchObject({
      name: 'notes.txt',
      mime_type: 'text/plain',
      service: 'downloadable',
      size: 3000,
      is_uploaded: true,
      organization_id: acme.organizationId,
      checksum_sha256_hex: createHash('sha256').update(bytes).digest('hex'),
    });
  });

  it('uploads an empty file', async () => {
    const file = await tillJson(['files', 'upload', localFile('empty.txt', Buffer.alloc(0))], acme.env);
    expect(file).toMatchObject({ size: 0, is_uploaded: true, checksum_sha256_hex: createHash('sha256').digest('hex') });
  });

  it('uploads a file larger than a part in several parts', async () => {
    const bytes = randomBytes(PART_SIZE + 12_345);
    const file = await tillJson(['files', 'upload', localFile('big.bin', bytes), '--name', 'Big download', '--file-version', '2.0'], acme.env);
    expect(file).toMatchObject({ name: 'Big download', version: '2.0', size: bytes.length, is_uploaded: true, mime_type: 'application/octet-stream' });
    expect(file.checksum_sha256_hex).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('uploads product media that products can then show', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a0e5d5c70000000049454e44ae426082', 'hex');
    const media = await tillJson(['files', 'upload', localFile('cover.png', png), '--service', 'product_media'], acme.env);
    expect(media).toMatchObject({ service: 'product_media', mime_type: 'image/png', public_url: expect.stringMatching(/^http/) });
    const product = await tillJson(['products', 'create', '--name', 'Illustrated', '--price', '500:usd', '--media', media.id], acme.env);
    expect(product.medias.map((file: { id: string }) => file.id)).toEqual([media.id]);
  });

  it('shows a progress bar on a terminal (stderr), and a line saying what was uploaded after it', async () => {
    const path = localFile('progress.bin', randomBytes(200_000));
    const result = await tillOnTerminal(['files', 'upload', path], { ...acme.env, NO_COLOR: '1' });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/Uploading progress\.bin {2}█+ {2}100% {2}195\.3 KB \/ 195\.3 KB/);
    // The whole file object only with --json (issue 14: a change prints a short summary).
    expect(result.stdout).toMatch(/✓ Uploaded progress\.bin \(195\.3 KB\) as file [0-9a-f-]{36}\./);
    expect(result.stdout).not.toContain('is_uploaded');
  });

  it('lists, gets, renames and deletes files', async () => {
    const uploaded = await tillJson(['files', 'upload', localFile('a.txt', Buffer.from('hello'))], acme.env);
    const listed = await tillJson(['files', 'list', '--limit', '100'], acme.env);
    expect(listed.items.map((file: { id: string }) => file.id)).toContain(uploaded.id);
    expect((await tillJson(['files', 'get', uploaded.id], acme.env)).id).toBe(uploaded.id);
    expect(await tillJson(['files', 'update', uploaded.id, '--name', 'b.txt'], acme.env)).toMatchObject({ id: uploaded.id, name: 'b.txt' });
    expect(await tillJson(['files', 'delete', uploaded.id, '--yes'], acme.env)).toEqual({ id: uploaded.id, deleted: true });
    const gone = await till(['files', 'get', uploaded.id, '--json'], acme.env);
    expect(gone.exitCode).toBe(4);
  });

  it('exits 5 for a path that is not a readable file, and 2 without a path off a terminal', async () => {
    const missing = await till(['files', 'upload', '/nonexistent/file.bin'], acme.env);
    expect(missing.exitCode).toBe(5);
    expect(missing.stderr).toContain('Cannot read /nonexistent/file.bin (no such file)');
    const none = await till(['files', 'upload'], acme.env);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('Missing the <path> argument');
  });

  it('passes the server\'s refusal of a file on with the flag to fix (exit 5)', async () => {
    const result = await till(['files', 'upload', localFile('notes.txt', Buffer.from('text')), '--service', 'product_media'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('(--mime-type)');
  });
});

describe('upload parts', () => {
  it('cuts a file into 8 MiB parts, end exclusive, and an empty file into one empty part', () => {
    expect(partsOf(0)).toEqual([{ number: 1, chunk_start: 0, chunk_end: 0 }]);
    expect(partsOf(PART_SIZE * 2 + 1)).toEqual([
      { number: 1, chunk_start: 0, chunk_end: PART_SIZE },
      { number: 2, chunk_start: PART_SIZE, chunk_end: PART_SIZE * 2 },
      { number: 3, chunk_start: PART_SIZE * 2, chunk_end: PART_SIZE * 2 + 1 },
    ]);
  });
});
