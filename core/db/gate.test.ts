import { describe, expect, it } from 'vitest';
import { createGate } from './gate.js';

describe('a gate', () => {
  it('lets at most its limit through at once and the rest in arrival order, also after a failure', async () => {
    const gate = createGate(2);
    const order: string[] = [];
    let inside = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const work = (name: string, fail = false) =>
      gate(async () => {
        inside++;
        most = Math.max(most, inside);
        order.push(name);
        await new Promise<void>((resolve) => releases.push(resolve));
        inside--;
        if (fail) throw new Error(name);
        return name;
      });
    const all = [work('a', true), work('b'), work('c'), work('d')].map((p) => p.catch((error: Error) => `failed ${error.message}`));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['a', 'b']);
    releases.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['a', 'b', 'c']);
    while (releases.length) {
      releases.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(all)).toEqual(['failed a', 'b', 'c', 'd']);
    expect(most).toBe(2);
  });
});
