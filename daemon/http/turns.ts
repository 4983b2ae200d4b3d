import type { IncomingMessage, ServerResponse } from 'node:http';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Requests started a turn at most. One a turn kept the turns shortest but cost 20–35 % more CPU a read than 8 under
 * the reads bench: every answer then went out alone and woke the client on its own (docs/performance.md, "Reads").
 */
export const REQUESTS_PER_TURN = 8;

/**
 * Starts requests in the order they arrived, REQUESTS_PER_TURN per turn of the event loop. Node's libuv (≥ 1.45)
 * accepts one new connection per turn, and a turn ran every request read in it: under saturation (100 connections)
 * a turn of tilld lasted 100–200 ms, so the last of 100 new connections waited 10–20 s to be accepted, the
 * multi-second p99 and the client timeouts of docs/performance.md ("Reads", the tail). Started a few a turn, a turn
 * lasts a few requests (a SQLite read runs to its end within it), new connections are accepted between them, and the
 * requests read meanwhile wait their turn first come, first served. Requests arriving when none wait start in the
 * turn they arrived in.
 */
export function fewRequestsPerTurn(listener: RequestListener): RequestListener {
  // A queue: `waiting` from `next` on; started entries are let go, and the array is compacted now and then.
  const waiting: ((readonly [IncomingMessage, ServerResponse]) | undefined)[] = [];
  let next = 0;
  const startSome = () => {
    const end = Math.min(waiting.length, next + REQUESTS_PER_TURN);
    const batch = waiting.slice(next, end) as (readonly [IncomingMessage, ServerResponse])[];
    waiting.fill(undefined, next, end);
    next = end;
    if (next === waiting.length) {
      waiting.length = 0;
      next = 0;
    } else {
      if (next >= 1024) {
        waiting.splice(0, next);
        next = 0;
      }
      setImmediate(startSome);
    }
    for (const [req, res] of batch) listener(req, res);
  };
  return (req, res) => {
    waiting.push([req, res]);
    if (waiting.length - next === 1) setImmediate(startSome);
  };
}
