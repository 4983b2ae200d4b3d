import type { z } from 'zod';

export type FieldErrors = Partial<Record<string, string>>;

/** What went wrong with a submitted form: about the whole form, and per field (tied to its input). */
export interface FormErrors {
  form?: string;
  fields?: FieldErrors;
}

/** A posted field as a string: missing, repeated or odd values read as empty. */
export function fieldOf(body: unknown, name: string): string {
  if (!body || typeof body !== 'object') return '';
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : '';
}

export type ParsedForm<T> = { ok: true; data: T } | { ok: false; errors: FieldErrors };

/** Validates the posted fields named by the schema; the first message per field is the one shown. */
export function parseForm<S extends z.ZodObject>(schema: S, body: unknown): ParsedForm<z.infer<S>> {
  const raw = Object.fromEntries(Object.keys(schema.shape).map((name) => [name, fieldOf(body, name)]));
  const result = schema.safeParse(raw);
  if (result.success) return { ok: true, data: result.data };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) errors[String(issue.path[0])] ??= issue.message;
  return { ok: false, errors };
}
