import type { Readable } from 'node:stream';

/**
 * Where file bytes are kept. The daemon uses the local disk (local-storage.ts); an S3-compatible
 * bucket can implement the same three calls. Keys are `/`-separated ids (`<organization>/<file>`).
 */
export interface FileStorage {
  /** Stores the stream under `key`, replacing what was there; if the stream fails, nothing new is visible. */
  put(key: string, body: Readable): Promise<void>;
  /** The bytes under `key`, or undefined when there are none. */
  get(key: string): Promise<Readable | undefined>;
  /** Removes `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
}
