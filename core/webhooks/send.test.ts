import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendWebhook } from './send.js';

let server: Server;
let port: number;
let hits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => {
      if (req.url === '/missing') res.writeHead(404).end('no such hook');
      else if (req.url === '/long') res.writeHead(200).end('é'.repeat(10_000));
      else if (req.url === '/moved') res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const send = (url: string, allowPrivate: boolean) => sendWebhook({ url, body: '{}', headers: { 'content-type': 'application/json' } }, { timeoutMs: 2000, allowPrivate });

describe('sendWebhook', () => {
  it('refuses a host name that resolves to a private address, without connecting', async () => {
    const before = hits;
    const result = await send(`http://localhost:${port}/hook`, false);
    expect(result).toMatchObject({ succeeded: false, httpCode: null });
    expect(result.response).toMatch(/^Refused: localhost resolves to (127\.0\.0\.1|::1), a private address/);
    expect(hits).toBe(before);
  });

  it('refuses a literal private address without connecting', async () => {
    const before = hits;
    expect((await send(`http://127.0.0.1:${port}/hook`, false)).response).toMatch(/^Refused: 127\.0\.0\.1 is a private address/);
    // The 6to4, NAT64 and IPv4-compatible spellings of loopback are refused the same way at delivery.
    for (const host of ['[2002:7f00:1::]', '[64:ff9b::7f00:1]', '[::7f00:1]']) {
      expect((await send(`http://${host}:${port}/hook`, false)).response, host).toMatch(/^Refused: .* is a private address/);
    }
    expect(hits).toBe(before);
  });

  it('sends when private addresses are allowed, and counts only 2xx as success', async () => {
    expect(await send(`http://localhost:${port}/hook`, true)).toMatchObject({ succeeded: true, httpCode: 204 });
    expect(await send(`http://127.0.0.1:${port}/missing`, true)).toMatchObject({ succeeded: false, httpCode: 404, response: 'no such hook' });
    expect(await send(`http://127.0.0.1:${port}/moved`, true)).toMatchObject({ succeeded: false, httpCode: 302 });
  });

  it('keeps the first 2,048 characters of a long answer', async () => {
    const result = await send(`http://127.0.0.1:${port}/long`, true);
    expect(result.succeeded).toBe(true);
    expect(result.response).toBe('é'.repeat(2048));
  });

  it('reports a connection error as a failed attempt with its reason', async () => {
    const result = await send('http://127.0.0.1:1/hook', true);
    expect(result).toMatchObject({ succeeded: false, httpCode: null });
    expect(result.response).toMatch(/ECONNREFUSED/);
  });
});
