import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { loggablePath, type Logger } from '../logger.js';
import { CLIENT_IP_HEADER } from '../../core/auth/auth.js';

declare module 'http' {
  interface IncomingMessage {
    /** The request's id (X-Request-Id), in its log line and its 500 answer. */
    id: string;
    /** A logger whose lines carry the request's id. */
    log: Logger;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: its X-Request-Id when sane, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Logs one line when the response ends (or fails, or its connection closes first): `request_id`, `req` (method,
 * path), `res` (status) and `responseTime` (ms), at info, or at error with `err` for a 5xx. Answers a function that
 * takes the listeners off again, for a request handed on unanswered (daemon/http/v1/hot-reads.ts).
 */
export function logWhenDone(logger: Logger, req: IncomingMessage, res: ServerResponse, id: string, path: string): () => void {
  const started = Date.now();
  const detach = () => {
    res.off('close', done);
    res.off('finish', done);
    res.off('error', done);
  };
  const done = (error?: unknown) => {
    detach();
    const responseTime = Date.now() - started;
    const line = { request_id: id, req: { method: req.method, path }, res: { status: res.statusCode } };
    if (error instanceof Error || res.statusCode >= 500) {
      const err = error instanceof Error ? error : new Error(`failed with status code ${res.statusCode}`);
      logger.error({ ...line, err, responseTime }, 'request errored');
    } else {
      logger.info({ ...line, responseTime }, !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted');
    }
  };
  res.on('close', done);
  res.on('finish', done);
  res.on('error', done);
  return detach;
}

/**
 * Gives every request an id (kept from X-Request-Id when sane), echoes it, and logs one line per response with it
 * (logWhenDone), with the path as loggablePath shows it. The line pino-http wrote, without its two child loggers a
 * request: they cost more than the line itself on a read (docs/performance.md, "Reads"); `req.log` makes its child
 * only when something logs.
 */
export function requestLogging(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const id = requestIdOf(req);
    res.setHeader('X-Request-Id', id);
    req.id = id;
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', { configurable: true, get: () => (child ??= logger.child({ request_id: id })) });
    logWhenDone(logger, req, res, id, loggablePath(req.originalUrl));
    next();
  };
}

/**
 * Better Auth keys rate limits on a client-IP header. Clients may not choose it: the incoming copy is
 * dropped and replaced with the socket address (or the proxy's, when TILL_TRUST_PROXY is on).
 */
export const clientIpHeader: RequestHandler = (req, _res, next) => {
  delete req.headers[CLIENT_IP_HEADER];
  if (req.ip) req.headers[CLIENT_IP_HEADER] = req.ip;
  next();
};
