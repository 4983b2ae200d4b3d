import { randomFillSync, randomUUID } from 'node:crypto';

/**
 * Value conversions between TypeScript and the two dialects, used by repositories only.
 * Timestamps are written as ISO-8601 UTC text (SQLite keeps the text, PostgreSQL parses it into
 * timestamptz); JSON is written as text (SQLite text, PostgreSQL jsonb); pg returns bigints as strings.
 */

export const newId = (): string => randomUUID();

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * A generator of time-ordered UUIDs (RFC 9562 version 7): 48 bits of epoch milliseconds, a 12-bit counter within
 * the millisecond (so the ids one generator makes sort in the order it made them, even if the clock steps back),
 * then 62 random bits. For rows inserted at volume (ingested events): each new id lands at the end of the
 * primary-key index instead of at a random page, which doubles SQLite's insert rate at a million rows. Any UUID
 * parser accepts it.
 */
export function timeOrderedIds(): (now?: number) => string {
  const randomPool = new Uint8Array(10 * 1024);
  let poolOffset = randomPool.length;
  let lastMs = -1;
  let sequence = 0;
  return (now = Date.now()) => {
    if (poolOffset + 10 > randomPool.length) {
      randomFillSync(randomPool);
      poolOffset = 0;
    }
    const random = randomPool.subarray(poolOffset, poolOffset + 10);
    poolOffset += 10;
    if (now > lastMs) {
      lastMs = now;
      sequence = ((random[0]! << 4) | (random[1]! >> 4)) & 0x3ff; // a random start leaves room to count up
    } else {
      sequence++;
      if (sequence > 0xfff) {
        lastMs++; // more than ~3,000 ids in one millisecond: borrow the next one rather than repeat
        sequence = 0;
      }
    }
    const ms = lastMs.toString(16).padStart(12, '0');
    const r = (i: number) => HEX[random[i]!]!;
    return (
      `${ms.slice(0, 8)}-${ms.slice(8)}-7${sequence.toString(16).padStart(3, '0')}-${HEX[(random[2]! & 0x3f) | 0x80]}${r(3)}-` +
      `${r(4)}${r(5)}${r(6)}${r(7)}${r(8)}${r(9)}`
    );
  };
}

/** The process's time-ordered ids (see timeOrderedIds). */
export const newTimeOrderedId = timeOrderedIds();

export const toDbTime = (date: Date): string => date.toISOString();
export const toDbTimeOrNull = (date: Date | null | undefined): string | null => (date ? date.toISOString() : null);

/** Reads a timestamp column: a Date from pg, ISO text (or epoch ms) from SQLite. */
export function fromDbTime(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'number') return new Date(value);
  if (typeof value === 'string') return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
  throw new TypeError(`not a timestamp: ${String(value)}`);
}

export const fromDbTimeOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : fromDbTime(value));

export const toDbJson = (value: unknown): string => JSON.stringify(value);

/** Reads a JSON column: already parsed by pg (jsonb), text on SQLite. */
export function fromDbJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/** Reads an integer column that may be a bigint (pg answers those as strings). */
export function fromDbInt(value: unknown): number {
  const n = typeof value === 'string' ? Number(value) : (value as number);
  if (!Number.isSafeInteger(n)) throw new TypeError(`not a safe integer: ${String(value)}`);
  return n;
}

export const fromDbBool = (value: unknown): boolean => value === true || value === 1 || value === '1' || value === 't';
