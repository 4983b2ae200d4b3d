/** Where a signed-in user lands when no (acceptable) `next` was given. */
export const DEFAULT_NEXT = '/account';

const PLACEHOLDER_ORIGIN = 'http://till.invalid';

/**
 * The `next` redirect target if it is a path on this daemon, else the default. Refuses absolute URLs,
 * protocol-relative `//host`, backslash tricks (`/\host`, which browsers read as `//host`), control
 * characters, and the sign-in/sign-up pages themselves (which would loop).
 */
export function safeNext(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return DEFAULT_NEXT;
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return DEFAULT_NEXT;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return DEFAULT_NEXT;
  let url: URL;
  try {
    url = new URL(value, PLACEHOLDER_ORIGIN);
  } catch {
    return DEFAULT_NEXT;
  }
  if (url.origin !== PLACEHOLDER_ORIGIN) return DEFAULT_NEXT;
  // Dot segments can normalise into `//host` (`/.//evil`, `/a/..//evil`), which a browser reads as another site.
  if (url.pathname.startsWith('//') || url.pathname.includes('\\')) return DEFAULT_NEXT;
  if (url.pathname === '/sign-in' || url.pathname === '/sign-up') return DEFAULT_NEXT;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** `path` with `?next=` added, unless `next` is the default anyway. */
export function withNext(path: string, next: string): string {
  return next === DEFAULT_NEXT ? path : `${path}?next=${encodeURIComponent(next)}`;
}
