import { APIError } from 'better-auth/api';

/** Longest value of each user field a person types or a provider sends (the email: RFC 5321's path limit). */
export const USER_FIELD_LIMITS = { name: 100, email: 254, image: 2048 } as const;

/** C0 controls and DEL: no name, address or picture URL holds one. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Checks the user fields a create or an update writes: text, within its limit, without control characters.
 * Runs before every write of a user (sign-up, update-user, the admin routes, provider sign-in).
 */
export function assertUserFields(data: Record<string, unknown>): void {
  for (const [field, limit] of Object.entries(USER_FIELD_LIMITS)) {
    const value = data[field];
    if (value === undefined || (value === null && field === 'image')) continue;
    if (typeof value !== 'string') throw invalid(field, 'Expected text');
    if (value.length > limit) throw invalid(field, `At most ${limit} characters`);
    if (CONTROL_CHARACTER.test(value)) throw invalid(field, 'Control characters are not allowed');
  }
}

function invalid(field: string, message: string): APIError {
  return new APIError('BAD_REQUEST', { code: 'VALIDATION_ERROR', message: `[body.${field}] ${message}` });
}
