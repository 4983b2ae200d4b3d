import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FileStorage } from './storage.js';

const KEY = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

/** File storage in a directory of the local disk (the daemon's data directory by default). */
export function localFileStorage(root: string): FileStorage {
  // Keys are built from ids, never from user input; refusing anything else keeps every path under root.
  const pathOf = (key: string) => {
    if (!KEY.test(key)) throw new Error(`Invalid storage key: ${key}`);
    return join(root, ...key.split('/'));
  };

  return {
    async put(key, body) {
      const target = pathOf(key);
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      // Written aside and renamed: a reader never sees half a file, a failed upload leaves nothing.
      const temporary = `${target}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        await pipeline(body, createWriteStream(temporary, { mode: 0o600 }));
        await rename(temporary, target);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    },

    async get(key) {
      try {
        const handle = await open(pathOf(key), 'r');
        return handle.createReadStream() as Readable;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },

    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
  };
}
