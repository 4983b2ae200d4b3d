import { z } from 'zod';

/** Polar's metadata limits: at most 50 keys of 1–40 characters; values are strings (≤ 500), numbers or booleans. */
export const METADATA_MAX_KEYS = 50;

export const Metadata = z
  .record(z.string().min(1).max(40), z.union([z.string().max(500), z.number(), z.boolean()]))
  .refine((value) => Object.keys(value).length <= METADATA_MAX_KEYS, { message: `At most ${METADATA_MAX_KEYS} metadata keys` });
export type Metadata = z.infer<typeof Metadata>;

/** `metadata[key]=value` query filters (repeated keys mean "any of"), as Polar's list endpoints take them. */
export function metadataFilters(query: Record<string, unknown>): Record<string, string[]> {
  const filters: Record<string, string[]> = {};
  for (const [name, raw] of Object.entries(query)) {
    const match = /^metadata\[([^\]]{1,40})\]$/.exec(name);
    if (!match) continue;
    filters[match[1]] = (Array.isArray(raw) ? raw : [raw]).map(String);
  }
  return filters;
}
