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
