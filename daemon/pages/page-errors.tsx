import type { ErrorRequestHandler } from 'express';
import { isCoreError } from '../../core/errors.js';
import { HTTP_BY_KIND } from '../http/errors.js';
import { sendPage } from './render.js';
import { ErrorPage } from './views/ErrorPage.js';

/** The daemon's error middleware for the page routes: same statuses, but a page a person can read. */
export const pageErrorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (isCoreError(err)) {
    sendPage(res, HTTP_BY_KIND[err.kind].status, <ErrorPage title="Request refused" message={err.message} />);
    return;
  }
  const status = typeof err?.status === 'number' ? err.status : typeof err?.statusCode === 'number' ? err.statusCode : 500;
  if (status >= 400 && status < 500) {
    // body-parser: too large, bad charset, too many fields.
    const message = err.type === 'entity.too.large' ? 'The form sent was too large.' : 'The form sent could not be read.';
    sendPage(res, status, <ErrorPage title="Request refused" message={message} />);
    return;
  }
  req.log?.error({ err }, 'unhandled error');
  sendPage(
    res,
    500,
    <ErrorPage title="Something went wrong" message="Till could not finish this request. Try again; if it keeps happening, tell the operator the request id below." requestId={String(req.id)} />,
  );
};
