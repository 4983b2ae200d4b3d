import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isCoreError, type ErrorKind } from '../../core/errors.js';

export const STATUS_BY_KIND: Record<ErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payment_failed: 402,
  rate_limited: 429,
};

/** The one place failures become HTTP: expected ones with their status, everything else a logged 500. */
export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (isCoreError(err)) {
    res.status(STATUS_BY_KIND[err.kind]).json({ error: err.code, detail: err.message });
    return;
  }
  const status = typeof err?.status === 'number' ? err.status : typeof err?.statusCode === 'number' ? err.statusCode : 500;
  if (status >= 400 && status < 500) {
    // body-parser and friends: too large, malformed JSON, wrong charset.
    const code = err.type === 'entity.too.large' ? 'PAYLOAD_TOO_LARGE' : err.type === 'entity.parse.failed' ? 'MALFORMED_BODY' : 'BAD_REQUEST';
    res.status(status).json({ error: code, detail: err.expose ? err.message : 'Bad request' });
    return;
  }
  req.log?.error({ err }, 'unhandled error');
  res.status(500).json({ error: 'INTERNAL_SERVER_ERROR', detail: 'Internal server error', request_id: req.id });
};

export const notFound: RequestHandler = (req, res) => {
  res.status(404).json({ error: 'ResourceNotFound', detail: `No route for ${req.method} ${req.path}` });
};
