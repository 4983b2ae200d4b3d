import { z } from 'zod';
import { queryNumber } from './query.js';

export const MAX_LIMIT = 100;

/** Polar's list paging: `page` from 1, `limit` from 1 (default 10); a limit above 100 is taken as 100, as Polar does. */
export const PageQuery = z.object({
  page: queryNumber(z.coerce.number().int().min(1).default(1)),
  limit: queryNumber(z.coerce.number().int().min(1).default(10)).transform((limit) => Math.min(limit, MAX_LIMIT)),
});
export type PageQuery = z.infer<typeof PageQuery>;

export interface Page<T> {
  items: T[];
  totalCount: number;
}

/** The schema of a list answer of `item`s (the OpenAPI document's). */
export const ListAnswer = <S extends z.ZodType>(item: S) =>
  z.object({ items: z.array(item), pagination: z.object({ total_count: z.int().min(0), max_page: z.int().min(0) }) });

/** The wire shape of a list answer: `{items, pagination: {total_count, max_page}}`. */
export function listResource<T, W>(page: Page<T>, query: PageQuery, serialize: (item: T) => W) {
  return {
    items: page.items.map(serialize),
    pagination: { total_count: page.totalCount, max_page: Math.ceil(page.totalCount / query.limit) },
  };
}

export const offsetOf = (query: PageQuery) => (query.page - 1) * query.limit;
