import type { z } from 'zod';
import { CoreError } from '../../core/errors.js';
import type { ValidationIssue } from './errors.js';
import { findUnstorable } from '../../core/validation/unstorable.js';

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
