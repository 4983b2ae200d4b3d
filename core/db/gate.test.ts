import { describe, expect, it } from 'vitest';
import { createGroupGate, type Outcome } from './gate.js';

interface Item {
  name: string;
  key: string;
  weight: number;
}
const grouping = { key: (item: Item) => item.key, weight: (item: Item) => item.weight, maxWeight: 10 };
const item = (name: string, key = 'k', weight = 1): Item => ({ name, key, weight });
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A gate whose runs wait to be let go one by one, recording the groups they were given. */
function heldGate(limit: number, answer: (group: Item[]) => Outcome<string>[] = (group) => group.map((entry) => ({ ok: true, value: entry.name }))) {
  const groups: string[][] = [];
  const releases: ((fail?: Error) => void)[] = [];
  let inside = 0;
  let most = 0;
  const gate = createGroupGate<Item, string>(limit, grouping, async (group) => {
    inside++;
    most = Math.max(most, inside);
    groups.push(group.map((entry) => entry.name));
    const failure = await new Promise<Error | undefined>((resolve) => releases.push(resolve));
    inside--;
    if (failure) throw failure;
    return answer(group);
  });
  const settle = (promise: Promise<string>) => promise.catch((error: Error) => `failed ${error.message}`);
  return { gate, groups, releases, settle, most: () => most };
}

describe('a group gate', () => {
  it('runs an item at once while a place is free and lets at most its limit of groups work at once', async () => {
    const held = heldGate(2);
    const all = ['a', 'b', 'c'].map((name) => held.settle(held.gate(item(name))));
    await turn();
    expect(held.groups).toEqual([['a'], ['b']]);
    held.releases.shift()!();
    await turn();
    expect(held.groups).toEqual([['a'], ['b'], ['c']]);
    while (held.releases.length) {
      held.releases.shift()!();
      await turn();
    }
    expect(await Promise.all(all)).toEqual(['a', 'b', 'c']);
    expect(held.most()).toBe(2);
  });

  it('runs the items that waited together, of one key and up to the weight, the first in line first', async () => {
    const held = heldGate(1);
    const all = [item('first'), item('a1', 'a', 4), item('b1', 'b'), item('a2', 'a', 5), item('a3', 'a', 2), item('a4', 'a', 1), item('big', 'a', 30), item('b2', 'b')].map((entry) => held.settle(held.gate(entry)));
    await turn();
    expect(held.groups).toEqual([['first']]);
    for (let round = 0; round < 5; round++) {
      held.releases.shift()!();
      await turn();
    }
    // a1 + a2 + a4 weigh 10 (a3 would make 12 and waits); b1 and b2 together; a heavier item than the limit alone.
    expect(held.groups).toEqual([['first'], ['a1', 'a2', 'a4'], ['b1', 'b2'], ['a3'], ['big']]);
    expect(await Promise.all(all)).toEqual(['first', 'a1', 'b1', 'a2', 'a3', 'a4', 'big', 'b2']);
  });

  it('answers each item of a group with its own outcome, and fails them all when the run fails, then goes on', async () => {
    const held = heldGate(1, (group) => group.map((entry) => (entry.name.startsWith('bad') ? { ok: false, error: new Error(entry.name) } : { ok: true, value: entry.name })));
    const first = held.settle(held.gate(item('first')));
    const grouped = ['x', 'bad1', 'y'].map((name) => held.settle(held.gate(item(name))));
    await turn();
    held.releases.shift()!(new Error('run broke'));
    await turn();
    const next = ['z', 'bad2'].map((name) => held.settle(held.gate(item(name))));
    held.releases.shift()!();
    await turn();
    held.releases.shift()!();
    expect(await first).toBe('failed run broke');
    expect(await Promise.all(grouped)).toEqual(['x', 'failed bad1', 'y']);
    expect(await Promise.all(next)).toEqual(['z', 'failed bad2']);
    expect(held.groups).toEqual([['first'], ['x', 'bad1', 'y'], ['z', 'bad2']]);
  });
});
