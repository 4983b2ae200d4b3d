import { describe, expect, it } from 'vitest';
import { mapInSlices } from './loop.js';
import { countLoopTurns } from './testing/loop-turns.js';

/** Holds the thread for `ms`, as a costly synchronous step would. */
const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('mapInSlices', () => {
  it('lets the event loop turn while it maps a batch too big for one turn, and keeps the order', async () => {
    const loop = countLoopTurns();
    const before = loop.turns;
    // 100 items of 0.2 ms: 20 ms of work, at least nine slices of 2 ms.
    const mapped = await mapInSlices(Array.from({ length: 100 }, (_, i) => i), (item, index) => {
      busy(0.2);
      return `${item}:${index}`;
    });
    loop.stop();
    expect(loop.turns - before).toBeGreaterThanOrEqual(5);
    expect(mapped).toEqual(Array.from({ length: 100 }, (_, i) => `${i}:${i}`));
  });

  it('maps within the turn it was called in while the slice lasts', async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    expect(await mapInSlices([1, 2, 3], (x) => x * 2, 60_000)).toEqual([2, 4, 6]);
    expect(turned).toBe(false);
  });
});
