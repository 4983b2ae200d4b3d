import { randomUUID } from 'node:crypto';

/**
 * Value conversions between TypeScript and the two dialects, used by repositories only.
 * Timestamps are written as ISO-8601 UTC text (SQLite keeps the text, PostgreSQL parses it into
 * timestamptz); JSON is written as text (SQLite text, PostgreSQL jsonb); pg returns bigints as strings.
 */

export const newId = (): string => randomUUID();

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
