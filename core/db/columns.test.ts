import { describe, expect, it } from 'vitest';
import { timeOrderedIds } from './columns.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('time-ordered ids', () => {
  it('are version 7 UUIDs carrying the millisecond they were made in', () => {
    const at = Date.UTC(2025, 10, 23, 12, 0, 0, 123);
    const id = timeOrderedIds()(at);
    expect(id).toMatch(UUID_V7);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
  });

  it('sort in the order they were made, within one millisecond and across many', () => {
    const base = Date.UTC(2025, 11, 1);
    const newTimeOrderedId = timeOrderedIds();
    const ids: string[] = [];
    for (let i = 0; i < 20_000; i++) ids.push(newTimeOrderedId(base + Math.floor(i / 5000)));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('stay ordered when the clock steps back', () => {
    const newTimeOrderedId = timeOrderedIds();
    const later = newTimeOrderedId(Date.UTC(2025, 11, 2));
    const after = newTimeOrderedId(Date.UTC(2020, 0, 1));
    expect(after > later).toBe(true);
  });
});
