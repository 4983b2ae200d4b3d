import type { TimeInterval } from './schema.js';

/** A quantities bucket: its label (the start of the interval, in the timezone) and the instants it covers, [from, to). */
export interface Bucket {
  start: Date;
  from: number;
  to: number;
}

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let found = formatters.get(timeZone);
  if (!found) {
    found = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, found);
  }
  return found;
}

/** Whether the runtime knows this IANA timezone. */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

const SLOT_MS = 15 * 60_000;
const MAX_CACHED_SLOTS = 100_000;
const offsetCache = new Map<string, Map<number, number>>();

/**
 * How far the timezone's wall clock is ahead of UTC at this instant, in ms. Intl is slow (a year of days in a metrics
 * answer asks a few thousand times), so the offset is kept per quarter hour (zones change offset on a quarter hour)
 * when it is the same at both ends of the quarter hour; UTC needs no asking.
 */
function offsetAt(timeZone: string, instant: number): number {
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') return 0;
  const slot = Math.floor(instant / SLOT_MS);
  let cache = offsetCache.get(timeZone);
  const cached = cache?.get(slot);
  if (cached !== undefined) return cached;
  const first = askedOffsetAt(timeZone, slot * SLOT_MS);
  if (first !== askedOffsetAt(timeZone, slot * SLOT_MS + SLOT_MS - 1)) return askedOffsetAt(timeZone, instant);
  if (!cache || cache.size >= MAX_CACHED_SLOTS) offsetCache.set(timeZone, (cache = new Map()));
  cache.set(slot, first);
  return first;
}

function askedOffsetAt(timeZone: string, instant: number): number {
  const parts = Object.fromEntries(formatter(timeZone).formatToParts(new Date(instant)).map((part) => [part.type, part.value]));
  const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return wall - Math.floor(instant / 1000) * 1000;
}

function wallOf(timeZone: string, instant: number): Wall {
  const local = new Date(instant + offsetAt(timeZone, instant));
  return { year: local.getUTCFullYear(), month: local.getUTCMonth(), day: local.getUTCDate(), hour: local.getUTCHours() };
}

/** The instant a wall-clock time happens in the timezone (the later reading when a DST change repeats it). */
function instantOf(timeZone: string, wall: Wall): number {
  const asUtc = Date.UTC(wall.year, wall.month, wall.day, wall.hour);
  let instant = asUtc - offsetAt(timeZone, asUtc);
  instant = asUtc - offsetAt(timeZone, instant);
  return instant;
}

function truncate(wall: Wall, interval: TimeInterval): Wall {
  switch (interval) {
    case 'hour':
      return wall;
    case 'day':
      return { ...wall, hour: 0 };
    case 'week': {
      // Weeks start on Monday, as PostgreSQL's date_trunc('week') has them.
      const weekday = (new Date(Date.UTC(wall.year, wall.month, wall.day)).getUTCDay() + 6) % 7;
      const monday = new Date(Date.UTC(wall.year, wall.month, wall.day - weekday));
      return { year: monday.getUTCFullYear(), month: monday.getUTCMonth(), day: monday.getUTCDate(), hour: 0 };
    }
    case 'month':
      return { year: wall.year, month: wall.month, day: 1, hour: 0 };
    case 'year':
      return { year: wall.year, month: 0, day: 1, hour: 0 };
  }
}

function next(wall: Wall, interval: TimeInterval): Wall {
  const date = new Date(Date.UTC(wall.year, wall.month, wall.day, wall.hour));
  if (interval === 'hour') date.setUTCHours(date.getUTCHours() + 1);
  if (interval === 'day') date.setUTCDate(date.getUTCDate() + 1);
  if (interval === 'week') date.setUTCDate(date.getUTCDate() + 7);
  if (interval === 'month') date.setUTCMonth(date.getUTCMonth() + 1);
  if (interval === 'year') date.setUTCFullYear(date.getUTCFullYear() + 1);
  return { year: date.getUTCFullYear(), month: date.getUTCMonth(), day: date.getUTCDate(), hour: date.getUTCHours() };
}

/**
 * The buckets from `start` to `end` (both included), each interval started on the timezone's calendar (days at
 * local midnight, weeks on Monday), as Polar's generate_series over date_trunc gives them. The first and last
 * buckets only count what falls inside [start, end]. Undefined when there would be more than `max`.
 */
export function bucketsBetween(start: Date, end: Date, interval: TimeInterval, timeZone: string, max: number): Bucket[] | undefined {
  const buckets: Bucket[] = [];
  const endMs = end.getTime();
  let wall = truncate(wallOf(timeZone, start.getTime()), interval);
  const startMs = start.getTime();
  // Hours start on the local hour (a +05:30 zone's hours start at :30 UTC).
  let at = interval === 'hour' ? startMs - ((((startMs + offsetAt(timeZone, startMs)) % 3_600_000) + 3_600_000) % 3_600_000) : instantOf(timeZone, wall);
  while (at <= endMs) {
    if (buckets.length === max) return undefined;
    let following: number;
    if (interval === 'hour') following = at + 3_600_000;
    else {
      wall = next(wall, interval);
      following = instantOf(timeZone, wall);
    }
    buckets.push({ start: new Date(at), from: Math.max(at, start.getTime()), to: Math.min(following, endMs + 1) });
    at = following;
  }
  return buckets;
}

/** The instant the timezone's calendar day `YYYY-MM-DD` starts (its local midnight). */
export function startOfDay(date: string, timeZone: string): Date {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return new Date(instantOf(timeZone, { year, month: month - 1, day, hour: 0 }));
}

/** Where the interval that starts at `bucketStart` ends (the next one starts), on the timezone's calendar. */
export function nextBucketStart(bucketStart: Date, interval: TimeInterval, timeZone: string): Date {
  if (interval === 'hour') return new Date(bucketStart.getTime() + 3_600_000);
  return new Date(instantOf(timeZone, next(wallOf(timeZone, bucketStart.getTime()), interval)));
}

/** The same wall-clock time `days` calendar days later (earlier when negative), as PostgreSQL adds '30 days' in a zone. */
export function addCalendarDays(instant: Date, days: number, timeZone: string): Date {
  const shifted = instant.getTime() + days * 86_400_000;
  return new Date(shifted + offsetAt(timeZone, instant.getTime()) - offsetAt(timeZone, shifted));
}

/** The instant written in the timezone's local time with its offset (2027-03-28T00:00:00+01:00), as Polar answers timestamps. */
export function formatInZone(instant: Date, timeZone: string): string {
  const offset = offsetAt(timeZone, instant.getTime());
  if (offset === 0) return instant.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const local = new Date(instant.getTime() + offset).toISOString().slice(0, 19);
  const minutes = Math.abs(offset) / 60_000;
  const sign = offset < 0 ? '-' : '+';
  return `${local}${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/**
 * The instant as Python's `datetime.isoformat()` writes it in the timezone (Polar's CSV exports):
 * `2027-03-28T01:02:03.456000+01:00`, `+00:00` for UTC, the fraction only when there is one.
 */
export function isoformatInZone(instant: Date, timeZone: string): string {
  const offset = offsetAt(timeZone, instant.getTime());
  const local = new Date(instant.getTime() + offset).toISOString();
  const millis = instant.getUTCMilliseconds();
  const fraction = millis ? `.${String(millis).padStart(3, '0')}000` : '';
  const minutes = Math.abs(offset) / 60_000;
  const sign = offset < 0 ? '-' : '+';
  return `${local.slice(0, 19)}${fraction}${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}
