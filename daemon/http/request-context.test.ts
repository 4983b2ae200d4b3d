import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { createLogger, loggablePath } from '../logger.js';
import { requestLogging } from './request-context.js';

/** An app behind requestLogging on a real port, and the lines its logger wrote. */
async function loggedApp(routes: (app: express.Express) => void) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('info', new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const app = express();
  app.use(requestLogging(logger));
  routes(app);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, { headers });
    await res.text();
    return res;
  };
  // A line is written when the answer is done, which the client may see first.
  const lineOf = async (id: string) => {
    for (let i = 0; i < 100; i++) {
      const line = lines.find((l) => l.request_id === id && 'res' in l);
      if (line) return line;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no line for ${id}`);
  };
  return { lines, get, lineOf, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('the request log', () => {
  it('masks path segments that are credentials and drops every query string', () => {
    expect(loggablePath('/checkout/cs_secret123/confirmation?x=1')).toBe('/checkout/***/confirmation');
    expect(loggablePath('/v1/checkouts/client/cs_secret123/confirm')).toBe('/v1/checkouts/client/***/confirm');
    expect(loggablePath('/downloads/eyJhbGciOi.signature')).toBe('/downloads/***');
    expect(loggablePath('/v1/orders/abc/invoice.pdf?expires=1&signature=s')).toBe('/v1/orders/abc/invoice.pdf');
    expect(loggablePath('/v1/checkouts/abc')).toBe('/v1/checkouts/abc');
    expect(loggablePath('/api/auth/reset-password/tok3n?callbackURL=/x')).toBe('/api/auth/reset-password/***');
  });

  it('writes one line an answer with its request id, method, masked path, status and time', async () => {
    const app = await loggedApp((a) => a.get('/checkout/:secret', (_req, res) => res.json({ ok: true })));
    try {
      const res = await app.get('/checkout/cs_secret?token=t', { 'x-request-id': 'ci-7' });
      expect(res.headers.get('x-request-id')).toBe('ci-7');
      const line = await app.lineOf('ci-7');
      expect(Object.keys(line)).toEqual(['level', 'time', 'service', 'request_id', 'req', 'res', 'responseTime', 'msg']);
      expect(line).toMatchObject({ level: 30, service: 'tilld', req: { method: 'GET', path: '/checkout/***' }, res: { status: 200 }, msg: 'request completed' });
      expect(line.responseTime).toEqual(expect.any(Number));
      expect(app.lines.filter((l) => l.request_id === 'ci-7')).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('logs a 5xx answer at error with what failed', async () => {
    const app = await loggedApp((a) => a.get('/boom', (_req, res) => res.status(503).json({})));
    try {
      await app.get('/boom', { 'x-request-id': 'boom-1' });
      expect(await app.lineOf('boom-1')).toMatchObject({ level: 50, res: { status: 503 }, err: { message: 'failed with status code 503' }, msg: 'request errored' });
    } finally {
      await app.close();
    }
  });

  it('gives the handlers a logger whose lines carry the request id', async () => {
    const app = await loggedApp((a) =>
      a.get('/warn', (req, res) => {
        req.log.warn({ path: '/downloads/signed-token' }, 'looked odd');
        res.json({});
      }),
    );
    try {
      const res = await app.get('/warn');
      const id = res.headers.get('x-request-id')!;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      await app.lineOf(id);
      expect(app.lines.find((l) => l.msg === 'looked odd')).toMatchObject({ level: 40, request_id: id, path: '/downloads/***' });
    } finally {
      await app.close();
    }
  });
});
