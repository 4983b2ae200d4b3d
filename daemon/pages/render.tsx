import type { Response } from 'express';
import type { ReactElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

/** Renders a page component to a complete HTML document and sends it. */
export function sendPage(res: Response, status: number, page: ReactElement): void {
  res.status(status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  // Pages show sessions and device codes: nothing to keep in shared caches or history snapshots.
  res.setHeader('Cache-Control', 'no-store');
  // helmet sends `no-referrer`, under which browsers send `Origin: null` even on same-origin form posts;
  // `same-origin` keeps the real Origin on our own forms (the CSRF check reads it) and still tells other sites nothing.
  res.setHeader('Referrer-Policy', 'same-origin');
  res.send(`<!DOCTYPE html>${renderToStaticMarkup(page)}`);
}
