import { z } from 'zod';
import { nextTurn } from '../../loop.js';
import { isTimeZone } from '../../metering/buckets.js';

/** A CSV value: empty for null, as Python's csv writer (Polar's exports) writes None. */
export type CsvValue = string | number | null | undefined;

/** A CSV answer: its file name and its lines, produced page by page as the client reads them. */
export interface CsvExport {
  filename: string;
  lines: AsyncIterable<string>;
}

/** How many rows an export reads per query: small enough that a page never holds the event loop for long. */
export const EXPORT_PAGE_SIZE = 200;

const NEEDS_QUOTES = /[",\r\n]/;

/** One line in the excel dialect Polar writes: quoted only when needed, quotes doubled, CRLF-terminated. */
export function csvLine(values: readonly CsvValue[]): string {
  const fields = values.map((value) => {
    const text = value === null || value === undefined ? '' : String(value);
    return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  });
  // A line of one empty field is written as "" so it still reads as a row (Python does the same).
  if (fields.length === 1 && fields[0] === '') return '""\r\n';
  return `${fields.join(',')}\r\n`;
}

/** Minor units as Polar's exports write them: amount / 100 as a Python float (`15.0`, `15.5`). */
export function majorUnits(minor: number): string {
  const major = minor / 100;
  return Number.isInteger(major) ? `${major}.0` : String(major);
}

/** Metadata as Python's json.dumps writes it (`{"a": 1, "b": "x"}`), or null when there is none. */
export function metadataJson(metadata: Record<string, unknown>): string | null {
  const entries = Object.entries(metadata);
  if (entries.length === 0) return null;
  return `{${entries.map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)}`).join(', ')}}`;
}


/**
 * Reads a list page by page (oldest first, so rows created meanwhile come after the last page instead of shifting
 * the pages) and yields each item; one page is one query.
 */
export async function* pages<T>(read: (page: { page: number; limit: number }) => Promise<{ items: T[] }>): AsyncGenerator<T> {
  for (let page = 1; ; page += 1) {
    const { items } = await read({ page, limit: EXPORT_PAGE_SIZE });
    yield* items;
    if (items.length < EXPORT_PAGE_SIZE) return;
    // Between pages the loop turns, so an export lets other requests run.
    await nextTurn();
  }
}

/** An export's `timezone`: an IANA zone the dates are written in, UTC by default (Polar's). */
export const ExportTimeZone = z
  .string()
  .max(64)
  .default('UTC')
  .refine(isTimeZone, { error: (issue) => `${String(issue.input)} is not a valid IANA time zone` });
