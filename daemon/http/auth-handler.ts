import type { RequestHandler } from 'express';
import { getRequest, setResponse } from 'better-call/node';
import type { TillAuth } from '../../core/auth/auth.js';

const tooLarge = (limit: number) =>
  Object.assign(new Error(`Request body is larger than ${limit} bytes`), { status: 413, type: 'entity.too.large', expose: true });

/** Serves Better Auth under Express with the daemon's body limit (its own Node handler has none). */
export function authHandler(auth: TillAuth, bodyLimit: number): RequestHandler {
  return async (req, res, next) => {
    if (Number(req.headers['content-length'] ?? 0) > bodyLimit) return next(tooLarge(bodyLimit));
    try {
      const base = `${req.protocol}://${req.headers.host ?? 'localhost'}`;
      const response = await auth.handler(getRequest({ base, request: req, bodySizeLimit: bodyLimit }));
      await setResponse(res, response);
    } catch (error) {
      next(error);
    }
  };
}
