import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SendResult } from './send.js';
import { inProcessSender, threadSender, type RunItem, type RunSender } from './send-run.js';
import { verifyWebhook } from './signing.js';

const SECRET = 'whsec_c2VuZC1ydW4tdGVzdC1zZWNyZXQtc2VuZC1ydW4tdGVzdA';
let server: Server;
let base: string;
let dir: string;
const arrived: string[] = [];
/** Requests held unanswered until released (the `slow` paths). */
const held: (() => void)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(req.headers[h])]));
      verifyWebhook(SECRET, body, headers);
      arrived.push(headers['webhook-id']);
      if (req.url === '/fail') res.writeHead(500).end('down');
      else if (req.url === '/slow') held.push(() => res.writeHead(204).end());
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The thread loads compiled JavaScript: the module bundled as tilld's build would emit it.
  dir = mkdtempSync(join(tmpdir(), 'till-send-run-'));
  await build({ entryPoints: [fileURLToPath(new URL('./send-run.ts', import.meta.url))], outfile: join(dir, 'send-run.mjs'), bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'error' });
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const settings = { timeoutMs: 2000, allowPrivate: true, userAgent: 'till-test', clockOffsetMs: 0 };
const item = (id: string, path = '/hook'): RunItem => ({ url: `${base}${path}`, id, body: JSON.stringify({ id }), secret: SECRET });

async function run(sender: RunSender, items: RunItem[], signal = new AbortController().signal) {
  const results: [number, SendResult][] = [];
  const sending = sender.start(items, settings, (index, result) => results.push([index, result]), signal);
  return { sending, results, next: sending.done };
}

for (const [name, make] of [
  ['on a thread of its own', () => threadSender(join(dir, 'send-run.mjs'))],
  ['in process', () => inProcessSender()],
] as const) {
  describe(`a run sent ${name}`, () => {
    it('sends its events in order, each signed, and reports every answer', async () => {
      const sender = make();
      arrived.length = 0;
      const { results, next } = await run(sender, ['a', 'b', 'c'].map((id) => item(id)));
      expect(await next).toBe(3);
      expect(arrived).toEqual(['a', 'b', 'c']);
      expect(results.map(([index, result]) => [index, result.httpCode])).toEqual([[0, 204], [1, 204], [2, 204]]);
      await sender.close();
    });

    it('stops at the first attempt that fails: the rest is not sent', async () => {
      const sender = make();
      arrived.length = 0;
      const { results, next } = await run(sender, [item('a'), item('b', '/fail'), item('c')]);
      expect(await next).toBe(2);
      expect(arrived).toEqual(['a', 'b']);
      expect(results.map(([, result]) => result.succeeded)).toEqual([true, false]);
      await sender.close();
    });

    it('halts before its next attempt when told to, and an abort leaves the attempt in flight unreported', async () => {
      const sender = make();
      arrived.length = 0;
      const halted = await run(sender, [item('a', '/slow'), item('b')]);
      while (!held.length) await new Promise((resolve) => setTimeout(resolve, 5));
      halted.sending.halt();
      held.shift()!();
      expect(await halted.next).toBe(1);
      expect(arrived).toEqual(['a']);

      const abort = new AbortController();
      const aborted = await run(sender, [item('c', '/slow'), item('d')], abort.signal);
      while (!held.length) await new Promise((resolve) => setTimeout(resolve, 5));
      abort.abort();
      expect(await aborted.next).toBe(0);
      expect(aborted.results).toEqual([]);
      held.shift()!();
      await sender.close();
    });
  });
}
