import { z } from 'zod';

/**
 * The one rule for organization slugs and names, applied wherever an organization is created or renamed:
 * /v1, the /account form, `till orgs create`, and Better Auth's /organization/create and /organization/update.
 * A slug goes into URLs and file names, so it is kept to what needs no escaping anywhere.
 */
export const SLUG_LENGTH = { min: 3, max: 64 } as const;
export const NAME_LENGTH = { min: 3, max: 64 } as const;

const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/** Control characters and the bidirectional overrides and isolates that make text read differently than it is stored. */
const INVISIBLE = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** Why `slug` is refused, or undefined when it is a valid slug. */
export function slugProblem(slug: string): string | undefined {
  if (slug.length < SLUG_LENGTH.min) return `The slug must be at least ${SLUG_LENGTH.min} characters long`;
  if (slug.length > SLUG_LENGTH.max) return `The slug must be at most ${SLUG_LENGTH.max} characters long`;
  if (!SLUG_PATTERN.test(slug)) return 'Use lowercase letters, digits and hyphens only, starting and ending with a letter or digit';
  return undefined;
}

/** Why `name` is refused (after trimming), or undefined when it is a valid organization name. */
export function nameProblem(name: string): string | undefined {
  const trimmed = name.trim();
  if (trimmed.length < NAME_LENGTH.min) return `The name must be at least ${NAME_LENGTH.min} characters long`;
  if (trimmed.length > NAME_LENGTH.max) return `The name must be at most ${NAME_LENGTH.max} characters long`;
  if (INVISIBLE.test(trimmed)) return 'The name may not contain control or text-direction characters';
  return undefined;
}

/** A slug for `name`: accents dropped, lowercase, every run of other characters one hyphen, cut to the maximum length. */
export function slugFromName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, SLUG_LENGTH.max)
    .replace(/^-+|-+$/g, '');
}

export const OrganizationSlug = z.string().superRefine((slug, ctx) => {
  const problem = slugProblem(slug);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const OrganizationName = z
  .string()
  .superRefine((name, ctx) => {
    const problem = nameProblem(name);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform((name) => name.trim());
