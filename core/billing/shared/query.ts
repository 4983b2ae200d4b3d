import { z } from 'zod';

/** A query filter given once (`?id=a`) or repeated (`?id=a&id=b`): always an array after parsing. */
export const oneOrMany = <S extends z.ZodType>(item: S) => z.preprocess((value) => (Array.isArray(value) ? value : [value]), z.array(item));

/**
 * A number read from a query string. `z.coerce.number()` alone reads an empty or blank value (`?depth=`) as 0, a
 * valid value of many filters: here it is refused as not a number. The published schema stays the inner one.
 */
export const queryNumber = <S extends z.ZodType>(schema: S) =>
  z.preprocess((value) => (typeof value === 'string' && value.trim() === '' ? Number.NaN : value), schema);

/** `true`/`false` in a query string. */
export const queryBoolean = z.enum(['true', 'false']).transform((value) => value === 'true');

/** `sorting=-created_at&sorting=name` restricted to the given properties; an unknown one is a 422 at ['query', 'sorting'], as Polar answers. */
export function sortingQuery<const P extends string>(properties: readonly P[]) {
  const allowed = new Set<string>(properties.flatMap((property) => [property, `-${property}`]));
  return z.preprocess(
    (value) => (Array.isArray(value) ? value : [value]),
    z.array(z.string()).superRefine((criteria, ctx) => {
      for (const criterion of criteria) {
        if (!allowed.has(criterion)) ctx.addIssue({ code: 'custom', message: 'Invalid sorting criterion.', input: criterion });
      }
    }),
  ) as unknown as z.ZodType<(P | `-${P}`)[], unknown>;
}

export interface SortCriterion {
  column: string;
  order: 'asc' | 'desc';
}

/** Turns `-created_at` into `{column: 'created_at', order: 'desc'}`. */
export const toSortCriteria = (sorting: readonly string[]): SortCriterion[] =>
  sorting.map((criterion) => (criterion.startsWith('-') ? { column: criterion.slice(1), order: 'desc' } : { column: criterion, order: 'asc' }));
