import type { z } from 'zod';
import { CoreError } from '../../core/errors.js';
import type { ValidationIssue } from './errors.js';

export type Location = 'body' | 'query' | 'path';

/** Parses a request part with its zod schema; a failure is a 422 listing every issue with its location. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: Location): z.infer<S> {
  // PostgreSQL text and jsonb cannot hold U+0000, and absurd nesting is no request's: refuse both up front.
  const unstorable = findUnstorable(value, location);
  if (unstorable) throw new CoreError('invalid', 'VALIDATION_ERROR', `Invalid ${location} parameters`, [unstorable]);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues: ValidationIssue[] = result.error.issues.map((issue) => ({
    loc: [location, ...issue.path.map((part) => (typeof part === 'number' ? part : String(part)))],
    msg: issue.message,
    type: issue.code,
  }));
  throw new CoreError('invalid', 'VALIDATION_ERROR', `Invalid ${location === 'path' ? 'path' : location} parameters`, issues);
}

/** No request shape of /v1 nests deeper than this; anything deeper is refused rather than walked. */
const MAX_DEPTH = 32;

/** Finds what the database cannot take: a string or key holding U+0000, or nesting past MAX_DEPTH (iteratively). */
function findUnstorable(value: unknown, location: Location): { loc: (string | number)[]; msg: string; type: string } | undefined {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [location] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return { loc: path, msg: 'Text may not contain the NUL character', type: 'string_nul' };
      continue;
    }
    if (!current || typeof current !== 'object') continue;
    if (path.length > MAX_DEPTH) return { loc: path, msg: `Nested more than ${MAX_DEPTH} levels deep`, type: 'too_deep' };
    for (const [key, item] of Object.entries(current)) {
      if (key.includes('\u0000')) return { loc: [...path, key], msg: 'Text may not contain the NUL character', type: 'string_nul' };
      stack.push({ value: item, path: [...path, Array.isArray(current) ? Number(key) : key] });
    }
  }
  return undefined;
}
