import type { z } from 'zod';
import { CoreError } from '../../core/errors.js';
import type { ValidationIssue } from './errors.js';

export type Location = 'body' | 'query' | 'path';

/** Parses a request part with its zod schema; a failure is a 422 listing every issue with its location. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: Location): z.infer<S> {
  const nul = findNul(value, [location]);
  if (nul) {
    // PostgreSQL text and jsonb cannot hold U+0000: refuse it here rather than fail in the database.
    throw new CoreError('invalid', 'VALIDATION_ERROR', `Invalid ${location} parameters`, [{ loc: nul, msg: 'Text may not contain the NUL character', type: 'string_nul' }]);
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues: ValidationIssue[] = result.error.issues.map((issue) => ({
    loc: [location, ...issue.path.map((part) => (typeof part === 'number' ? part : String(part)))],
    msg: issue.message,
    type: issue.code,
  }));
  throw new CoreError('invalid', 'VALIDATION_ERROR', `Invalid ${location === 'path' ? 'path' : location} parameters`, issues);
}

/** The location of the first string (or key) holding U+0000, if any. */
function findNul(value: unknown, path: (string | number)[]): (string | number)[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findNul(item, [...path, index]);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) return [...path, key];
      const found = findNul(item, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}
