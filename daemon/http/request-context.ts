import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import { loggablePath, type Logger } from '../logger.js';
import { CLIENT_IP_HEADER } from '../../core/auth/auth.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Gives every request an id (kept from X-Request-Id when sane), echoes it, and logs one line per response with it. */
export function requestLogging(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId: (req, res) => {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customAttributeKeys: { reqId: 'request_id' },
    serializers: {
      req: (req: { method: string; url: string }) => ({ method: req.method, path: loggablePath(req.url) }),
      res: (res: { statusCode: number }) => ({ status: res.statusCode }),
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    quietReqLogger: true,
  });
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
