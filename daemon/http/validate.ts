import type { z } from 'zod';
import { CoreError } from '../../core/errors.js';
import type { ValidationIssue } from './errors.js';

export type Location = 'body' | 'query' | 'path';

/** Parses a request part with its zod schema; a failure is a 422 listing every issue with its location. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: Location): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues: ValidationIssue[] = result.error.issues.map((issue) => ({
    loc: [location, ...issue.path.map((part) => (typeof part === 'number' ? part : String(part)))],
    msg: issue.message,
    type: issue.code,
  }));
  throw new CoreError('invalid', 'VALIDATION_ERROR', `Invalid ${location === 'path' ? 'path' : location} parameters`, issues);
}
