import { z } from 'zod';

/** A query filter given once (`?id=a`) or repeated (`?id=a&id=b`): always an array after parsing. */
export const oneOrMany = <S extends z.ZodType>(item: S) =>
  z.union([item, z.array(item)]).transform((value) => (Array.isArray(value) ? value : [value]) as z.infer<S>[]);

/** `true`/`false` in a query string. */
export const queryBoolean = z.enum(['true', 'false']).transform((value) => value === 'true');

/** `sorting=-created_at&sorting=name` restricted to the given properties; an unknown one is a 422. */
export function sortingQuery<const P extends string>(properties: readonly P[]) {
  const criteria = properties.flatMap((property) => [property, `-${property}`]) as [string, ...string[]];
  return oneOrMany(z.enum(criteria, { error: 'Invalid sorting criterion.' }));
}

export interface SortCriterion {
  column: string;
  order: 'asc' | 'desc';
}

/** Turns `-created_at` into `{column: 'created_at', order: 'desc'}`. */
export const toSortCriteria = (sorting: readonly string[]): SortCriterion[] =>
  sorting.map((criterion) => (criterion.startsWith('-') ? { column: criterion.slice(1), order: 'desc' } : { column: criterion, order: 'asc' }));
