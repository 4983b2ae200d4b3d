import express, { type RequestHandler } from 'express';
import { fromNodeHeaders } from 'better-auth/node';
import { setResponse } from 'better-call/node';
import type { TillAuth } from '../../core/auth/auth.js';

/** Headers that describe the original transfer, not the buffered body handed on. */
const TRANSFER_HEADERS = ['content-length', 'transfer-encoding', 'connection'];

/**
 * Serves Better Auth under Express. The body is read here, under the daemon's limit (413 otherwise,
 * chunked uploads included), and handed to Better Auth as a web Request.
 */
export function authHandler(auth: TillAuth, bodyLimit: number): RequestHandler[] {
  const readBody = express.raw({ type: () => true, limit: bodyLimit });
  const handle: RequestHandler = async (req, res, next) => {
    try {
      const headers = fromNodeHeaders(req.headers);
      for (const name of TRANSFER_HEADERS) headers.delete(name);
      const hasBody = Buffer.isBuffer(req.body) && req.body.length > 0 && req.method !== 'GET' && req.method !== 'HEAD';
      // A POST without a body is an empty JSON object: Better Auth's routes and hooks read fields of the body
      // without checking that there is one (a 500), while an empty object gets each route's own validation.
      const body = hasBody ? new Uint8Array(req.body as Buffer) : req.method === 'POST' ? new TextEncoder().encode('{}') : undefined;
      if (!hasBody && body) headers.set('content-type', 'application/json');
      const request = new Request(new URL(req.originalUrl, `${req.protocol}://${req.headers.host ?? 'localhost'}`), {
        method: req.method,
        headers,
        body,
      });
      await setResponse(res, await auth.handler(request));
    } catch (error) {
      next(error);
    }
  };
  return [readBody, handle];
}
