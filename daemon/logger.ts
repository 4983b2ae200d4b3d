import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Paths whose segment after these prefixes is itself a credential (a checkout's client secret, a signed download
 * token, Better Auth's password-reset token): the log shows `***` instead. Query strings (signed links, mail
 * tokens) are never logged at all.
 */
const SECRET_SEGMENTS = /^(\/checkout\/|\/v1\/checkouts\/client\/|\/downloads\/|\/api\/auth\/reset-password\/)[^/]+/;

/** The path as it is safe to log. */
export const loggablePath = (url: string) => url.split('?')[0]!.replace(SECRET_SEGMENTS, '$1***');

/** Longest message written whole: a value a client chose (a URL, an origin) is cut there. */
const MAX_MESSAGE = 500;

/** A message as it is safe to log: long ones are cut, saying how long they were. */
export const clipped = (message: string) => (message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}… (${message.length} characters)` : message);

/**
 * JSON logs on stdout. Credentials are never logged: request lines carry method, path and status only, and every
 * `path` field of every line goes through loggablePath (one mechanism for the request line and every warning).
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'tilld' },
      serializers: { path: (path: unknown) => (typeof path === 'string' ? loggablePath(path) : path) },
      redact: {
        paths: ['*.authorization', '*.cookie', '*.password', '*.token', '*.secret', '*["set-cookie"]'],
        censor: '[redacted]',
      },
    },
    destination ?? process.stdout,
  );
}
