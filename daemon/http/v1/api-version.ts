import type { RequestHandler, Response } from 'express';
import { API_VERSIONS, CURRENT_API_VERSION, isApiVersion, type ApiVersion } from '../../../core/billing/shared/api-version.js';
import { CoreError } from '../../../core/errors.js';

export const VERSION_HEADER = 'Polar-Version';

/**
 * Reads `Polar-Version` as Polar's APIVersionMiddleware does: absent means the current version, a version Till does
 * not serve (or a malformed one) is a 404 for every path, and every answer carries the version it was written in.
 */
export const apiVersion: RequestHandler = (req, res, next) => {
  const requested = req.get(VERSION_HEADER);
  const version = servedVersion(requested);
  if (!version) {
    next(new CoreError('not_found', 'UNSUPPORTED_API_VERSION', `Polar-Version ${JSON.stringify(requested)} is not served here: use one of ${API_VERSIONS.join(', ')}, or send no Polar-Version for ${CURRENT_API_VERSION}`));
    return;
  }
  res.locals.apiVersion = version;
  res.setHeader(VERSION_HEADER, version);
  next();
};

/** The version a `Polar-Version` value asks for (absent or empty: the current one), or undefined when Till does not serve it. */
export function servedVersion(requested: string | undefined): ApiVersion | undefined {
  const version = requested === undefined || requested === '' ? CURRENT_API_VERSION : requested.trim();
  return isApiVersion(version) ? version : undefined;
}

/** The version the request asked for (the current one outside /v1). */
export const requestApiVersion = (res: Response): ApiVersion => (res.locals.apiVersion as ApiVersion | undefined) ?? CURRENT_API_VERSION;
