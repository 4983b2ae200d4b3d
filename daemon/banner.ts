import { Writable } from 'node:stream';
import type { Database } from '../core/db/database.js';

/**
 * A log destination that holds the JSON lines back until `release()`, so that a line for a person (the banner)
 * can come first on a terminal although the URL is known only once tilld listens.
 */
export function heldDestination(target: NodeJS.WritableStream): { stream: Writable; release(): void } {
  let held: { chunk: Buffer | string; done: (error?: Error | null) => void }[] | undefined = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      if (held) held.push({ chunk, done });
      else target.write(chunk, () => done());
    },
  });
  return {
    stream,
    release() {
      const pending = held ?? [];
      held = undefined;
      for (const { chunk, done } of pending) target.write(chunk, () => done());
    },
  };
}

/**
 * What tilld says to a person who started it on a terminal: where it listens, and, when no account exists yet,
 * the page to open first. One line, before the JSON logs (which stay one JSON object per line).
 */
export async function bannerLine(db: Database, url: string, baseUrl: string): Promise<string> {
  const [{ count }] = (await db('user').count({ count: '*' })) as { count: number | string }[];
  const where = `tilld is listening on ${url}`;
  if (Number(count) > 0) return `${where}; sign in at ${baseUrl}/sign-in (JSON logs follow)`;
  return `${where}; no account yet: open ${baseUrl}/sign-up to create the first one (it administers this installation). JSON logs follow.`;
}
