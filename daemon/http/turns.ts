import type { IncomingMessage, ServerResponse } from 'node:http';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Starts requests in the order they arrived, one per turn of the event loop. Node's libuv (≥ 1.45) accepts one new
 * connection per turn, and a turn runs every request read in it: under saturation (100 connections) a turn of tilld
 * lasted 100–200 ms, so the last of 100 new connections waited 10–20 s to be accepted, the multi-second p99 and the
 * client timeouts of docs/performance.md ("Reads", the tail). Started one per turn, a turn lasts about one request
 * (a SQLite read runs to its end within it), new connections are accepted between requests, and the requests read
 * meanwhile wait their turn first come, first served. A request arriving when none waits starts in the same turn.
 */
export function oneRequestPerTurn(listener: RequestListener): RequestListener {
  // A queue: `waiting` from `next` on; started entries are let go, and the array is compacted now and then.
  const waiting: ((readonly [IncomingMessage, ServerResponse]) | undefined)[] = [];
  let next = 0;
  const startNext = () => {
    const [req, res] = waiting[next]!;
    waiting[next++] = undefined;
    if (next === waiting.length) {
      waiting.length = 0;
      next = 0;
    } else {
      if (next >= 1024) {
        waiting.splice(0, next);
        next = 0;
      }
      setImmediate(startNext);
    }
    listener(req, res);
  };
  return (req, res) => {
    waiting.push([req, res]);
    if (waiting.length - next === 1) setImmediate(startNext);
  };
}
