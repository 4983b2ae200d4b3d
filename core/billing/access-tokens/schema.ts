import { z } from 'zod';
import { Scope } from '../shared/scopes.js';

/** `expires_in` as Polar takes it: seconds, or an ISO 8601 duration (`P30D`, `PT12H`); null never expires. */
const MAX_TOKEN_LIFETIME_SECONDS = 10 * 366 * 24 * 3600;
const DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

export const Duration = z
  .union([
    z.number().int(),
    z
      .string()
      .regex(DURATION, 'Use seconds or an ISO 8601 duration such as P30D')
      .refine((value) => value !== 'P' && !value.endsWith('T'), 'Use seconds or an ISO 8601 duration such as P30D'),
  ])
  .refine((value) => {
    const seconds = durationSeconds(value);
    return seconds > 0 && seconds <= MAX_TOKEN_LIFETIME_SECONDS;
  }, 'A token lives between one second and ten years');

/** Seconds of a lifetime; NaN for a string that is no duration (zod runs the bounds check even after the union failed). */
export function durationSeconds(value: number | string): number {
  if (typeof value === 'number') return value;
  const match = DURATION.exec(value);
  if (!match) return Number.NaN;
  const [, w, d, h, m, s] = match.map((part) => Number(part ?? 0));
  return (((w * 7 + d) * 24 + h) * 60 + m) * 60 + s;
}

export const AccessTokenCreate = z.object({
  organization_id: z.string().min(1).nullish(),
  comment: z.string().trim().min(1).max(256),
  expires_in: Duration.nullish(),
  scopes: z.array(Scope).min(1).transform((scopes) => [...new Set(scopes)]),
});
export type AccessTokenCreate = z.infer<typeof AccessTokenCreate>;

export const AccessTokenUpdate = z.object({
  comment: z.string().trim().min(1).max(256).nullish(),
  scopes: z.array(Scope).min(1).transform((scopes) => [...new Set(scopes)]).nullish(),
});
export type AccessTokenUpdate = z.infer<typeof AccessTokenUpdate>;

export interface AccessToken {
  id: string;
  organizationId: string;
  comment: string;
  scopes: Scope[];
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  createdAt: Date;
  modifiedAt: Date | null;
}
