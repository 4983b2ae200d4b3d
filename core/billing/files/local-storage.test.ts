import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { localFileStorage } from './local-storage.js';

let root: string;

const text = async (body: Readable | undefined) => {
  const chunks: Buffer[] = [];
  for await (const chunk of body!) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'till-storage-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('localFileStorage', () => {
  it('puts, gets and deletes bytes under a key, in a directory per organization', async () => {
    const storage = localFileStorage(root);
    await storage.put('org-1/file-1', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    expect(existsSync(join(root, 'org-1', 'file-1'))).toBe(true);
    expect(await text(await storage.get('org-1/file-1'))).toBe('hello world');
    await storage.delete('org-1/file-1');
    expect(await storage.get('org-1/file-1')).toBeUndefined();
    await storage.delete('org-1/file-1');
  });

  it('leaves the previous bytes, and no temporary file, when a put fails midway', async () => {
    const storage = localFileStorage(root);
    await storage.put('org/f', Readable.from([Buffer.from('old')]));
    async function* failing() {
      yield Buffer.from('new');
      throw new Error('client went away');
    }
    await expect(storage.put('org/f', Readable.from(failing()))).rejects.toThrow('client went away');
    expect(await text(await storage.get('org/f'))).toBe('old');
    expect(readdirSync(join(root, 'org'))).toEqual(['f']);
  });

  it('refuses keys that could leave its directory', async () => {
    const storage = localFileStorage(root);
    for (const key of ['../escape', 'org/../../x', '/abs', 'org//f', '.hidden']) {
      await expect(storage.put(key, Readable.from([Buffer.from('x')])), key).rejects.toThrow('Invalid storage key');
    }
  });
});
