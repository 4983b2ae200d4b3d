import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHandler } from 'express';
import { CoreError } from '../../core/errors.js';

/**
 * CSRF defence for the page forms, on top of SameSite=Lax cookies (which still travel on posts from
 * other ports of the same host): a post whose Origin, or failing that Referer, names another origin is refused.
 * A post with neither (curl, old clients) is let through; it carries no ambient browser authority worth stealing.
 */
export function sameOriginForms(baseUrl: string): RequestHandler {
  const own = new URL(baseUrl).origin;
  return (req, _res, next) => {
    if (postedFromOrigin(req.headers, own)) return next();
    req.log?.warn({ origin: req.headers.origin ?? null, path: req.path }, 'cross-origin form post refused');
    next(new CoreError('forbidden', 'CROSS_ORIGIN_FORM', 'This form was sent from another site, so it was refused. Open Till directly and try again.'));
  };
}

/** True when a request's Origin (or Referer) is `own`, or it names none (not a browser's cross-site request). */
export function postedFromOrigin(headers: IncomingHttpHeaders, own: string): boolean {
  const origin = headers.origin;
  if (typeof origin === 'string') {
    // Privacy-sensitive contexts send "null"; the browser's own Sec-Fetch-Site then tells whether it was us.
    if (origin === 'null') return headers['sec-fetch-site'] === 'same-origin';
    return origin === own;
  }
  const referer = headers.referer;
  if (typeof referer !== 'string') return true;
  try {
    return new URL(referer).origin === own;
  } catch {
    return false;
  }
}
