import { setImmediate } from 'node:timers/promises';

/** Waits for the next turn of the event loop (setImmediate): pending I/O, timers and other requests run first. */
export const nextTurn = (): Promise<void> => setImmediate();

/** How long a batch of in-memory work holds the event loop before it lets the loop turn, in ms (as SQLITE_SLICE_MS). */
export const LOOP_SLICE_MS = 2;

/**
 * Maps `items` in order, letting the event loop turn (setImmediate: I/O, timers and other requests first) whenever
 * the mapping has held it for `sliceMs`. For batches built in memory that are too big for one turn: a refresh run
 * builds the states of up to 250 customers and their webhook payloads, 10-20 ms in one go under load, which every
 * request and timer waited for (tilld's loop delay, docs/performance.md).
 */
export async function mapInSlices<T, R>(items: readonly T[], map: (item: T, index: number) => R, sliceMs = LOOP_SLICE_MS): Promise<R[]> {
  const mapped: R[] = [];
  let sliceStarted = performance.now();
  for (let index = 0; index < items.length; index++) {
    if (performance.now() - sliceStarted >= sliceMs) {
      await nextTurn();
      sliceStarted = performance.now();
    }
    mapped.push(map(items[index]!, index));
  }
  return mapped;
}
