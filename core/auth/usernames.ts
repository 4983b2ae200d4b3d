/**
 * Till's username rules, given to Better Auth's `username` plugin (core/auth/auth.ts). The plugin
 * stores and looks up usernames lowercased, so sign-in by username ignores case.
 */

/** Length limits of a username (Better Auth's defaults, written down so the pages and docs can say them). */
export const USERNAME_LENGTH = { min: 3, max: 30 } as const;

/** Letters, digits, underscores and dots (ASCII): safe in URLs, logs and a shell. */
const USERNAME_PATTERN = /^[a-zA-Z0-9_.]+$/;

/** Letters and digits of any script, spaces, underscores, dots and hyphens; not blank. */
const DISPLAY_USERNAME_PATTERN = /^[\p{L}\p{N}_. -]+$/u;

/** Longest display username; its lowercased form need not be the username, so it may be longer. */
export const DISPLAY_USERNAME_MAX_LENGTH = 60;

/** Whether `username` uses only the allowed characters (the length is checked by Better Auth first). */
export function isValidUsername(username: string): boolean {
  return USERNAME_PATTERN.test(username);
}

/** Whether `displayUsername` is a name to show: allowed characters, not blank, not too long. */
export function isValidDisplayUsername(displayUsername: string): boolean {
  return (
    displayUsername.trim().length > 0 &&
    displayUsername.length <= DISPLAY_USERNAME_MAX_LENGTH &&
    DISPLAY_USERNAME_PATTERN.test(displayUsername)
  );
}
