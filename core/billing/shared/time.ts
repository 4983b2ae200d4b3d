import { z } from 'zod';

/**
 * An ISO 8601 timestamp with an offset, as the API takes them. Its UTC year must be 1–9999: PostgreSQL
 * refuses year 0, and a later year would serialize as `+010000-…`, which no client can read back.
 */
export const Timestamp = z.iso
  .datetime({ offset: true })
  .transform((value) => new Date(value))
  .refine((date) => {
    const year = date.getUTCFullYear();
    return year >= 1 && year <= 9999;
  }, 'Use a date between the years 1 and 9999');

export type CalendarInterval = 'day' | 'week' | 'month' | 'year';

/**
 * `count` intervals after `anchor`, on the calendar in UTC. Months and years keep the anchor's day of month,
 * clamped to the month's last day (Jan 31 + 1 month = Feb 28/29; + 2 months = Mar 31), so periods computed as
 * anchor + n intervals never drift.
 */
export function addInterval(anchor: Date, interval: CalendarInterval, count: number): Date {
  if (interval === 'day' || interval === 'week') {
    return new Date(anchor.getTime() + count * (interval === 'day' ? 1 : 7) * 86_400_000);
  }
  const months = interval === 'year' ? count * 12 : count;
  const year = anchor.getUTCFullYear();
  const month = anchor.getUTCMonth() + months;
  const targetYear = year + Math.floor(month / 12);
  const targetMonth = ((month % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
  const result = new Date(anchor.getTime());
  result.setUTCFullYear(targetYear, targetMonth, Math.min(anchor.getUTCDate(), lastDay));
  return result;
}
