import { createServer, request, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fewRequestsPerTurn, REQUESTS_PER_TURN } from './turns.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const fake = (n: number) => [{ url: `/${n}` } as IncomingMessage, {} as ServerResponse] as const;
const numbers = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('a few requests per turn', () => {
  it('starts the requests that arrived together a few per turn of the event loop, in the order they arrived', async () => {
    const started: number[] = [];
    const listener = fewRequestsPerTurn((req) => started.push(Number(req.url!.slice(1))));
    for (const n of numbers(0, 2 * REQUESTS_PER_TURN + 1)) listener(...fake(n));
    expect(started).toEqual([]);
    await nextTurn();
    expect(started).toEqual(numbers(0, REQUESTS_PER_TURN));
    // One arriving now waits behind those already waiting.
    listener(...fake(100));
    await nextTurn();
    expect(started).toEqual(numbers(0, 2 * REQUESTS_PER_TURN));
    await nextTurn();
    expect(started).toEqual([...numbers(0, 2 * REQUESTS_PER_TURN + 1), 100]);
  });

  it('starts a request that arrives when none waits in the turn it arrived in', async () => {
    const started: string[] = [];
    const listener = fewRequestsPerTurn((req) => started.push(req.url!));
    listener(...fake(1));
    await nextTurn();
    expect(started).toEqual(['/1']);
    listener(...fake(2));
    await nextTurn();
    expect(started).toEqual(['/1', '/2']);
  });

  it('starts every request of a long queue, in order', async () => {
    const started: number[] = [];
    const listener = fewRequestsPerTurn((req) => started.push(Number(req.url!.slice(1))));
    // Past the point where the queue's array is compacted, with arrivals while it drains.
    for (const n of numbers(0, 15_000)) listener(...fake(n));
    for (let turn = 0; turn < 1000; turn++) await nextTurn();
    for (const n of numbers(15_000, 25_000)) listener(...fake(n));
    while (started.length < 25_000) await nextTurn();
    expect(started).toEqual(numbers(0, 25_000));
  });

  it('answers every request of many kept-alive connections over HTTP', async () => {
    const server = createServer(fewRequestsPerTurn((req, res) => res.end(req.url)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    const get = (path: string) =>
      new Promise<string>((resolve, reject) => {
        request({ port, host: '127.0.0.1', path, agent }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk) => (body += chunk)).on('end', () => resolve(body));
        })
          .on('error', reject)
          .end();
      });
    try {
      const paths = Array.from({ length: 200 }, (_, n) => `/${n}`);
      expect(await Promise.all(paths.map(get))).toEqual(paths);
    } finally {
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
