import type { Request, Response } from 'express';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Answers with a stored file's bytes: its type and length, the route's own headers (caching, disposition, CSP),
 * and for HEAD the headers alone. A failure once the headers are out can only cut the connection; before, the
 * caller's error handler answers.
 */
export async function sendStoredFile(
  req: Request,
  res: Response,
  file: { mimeType: string; size: number },
  body: Readable,
  headers: Record<string, string>,
): Promise<void> {
  res.setHeader('Content-Type', file.mimeType);
  res.setHeader('Content-Length', String(file.size));
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (req.method === 'HEAD') {
    body.destroy();
    res.end();
    return;
  }
  await pipeline(body, res);
}
