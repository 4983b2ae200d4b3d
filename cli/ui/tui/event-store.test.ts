import { describe, expect, it } from 'vitest';
import { EventStore } from './event-store.js';

const event = (id: number, type = 'order.paid', data: unknown = {}) => ({ id: `evt_${id}`, type, timestamp: '2026-11-23T03:00:00Z', payload: { type, data } });

describe('EventStore', () => {
  it('keeps only the newest events up to its limit, newest first, while counting all of them', () => {
    const store = new EventStore(3);
    for (let i = 1; i <= 10; i += 1) store.add(event(i, i % 2 ? 'a' : 'b'));
    expect(store.list().map((e) => e.id)).toEqual(['evt_10', 'evt_9', 'evt_8']);
    expect(store.size).toBe(3);
    expect(store.total).toBe(10);
    expect(Object.fromEntries(store.counts)).toEqual({ a: 5, b: 5 });
  });

  it('skips an event id it has seen, as a resumed stream may send one again', () => {
    const store = new EventStore();
    expect(store.add(event(1))).toBe(true);
    expect(store.add(event(1))).toBe(false);
    expect(store.total).toBe(1);
  });

  it('filters by type or by any text of the payload, ignoring case', () => {
    const store = new EventStore();
    store.add(event(1, 'order.paid', { email: 'Ada@example.com' }));
    store.add(event(2, 'refund.created', { email: 'bob@example.com' }));
    expect(store.list('REFUND').map((e) => e.id)).toEqual(['evt_2']);
    expect(store.list('ada@').map((e) => e.id)).toEqual(['evt_1']);
  });

  it('counts the events of the last minute', () => {
    let now = 0;
    const store = new EventStore(1000, () => now);
    store.add(event(1));
    now = 30_000;
    store.add(event(2));
    now = 61_000;
    expect(store.perMinute()).toBe(1);
  });

  it('counts only the last minute of a long stream that no view read meanwhile', () => {
    let now = 0;
    const store = new EventStore(1000, () => now);
    // 10 events a second for two minutes, the rate never asked for until the end.
    for (let n = 0; n < 1200; n += 1) {
      now = n * 100;
      store.add(event(n));
    }
    // At 119.9 s: the seconds 60 to 119, 10 events each.
    expect(store.perMinute()).toBe(600);
    now = 150_000;
    expect(store.perMinute()).toBe(290);
    now = 200_000;
    expect(store.perMinute()).toBe(0);
  });

  it('keeps the history a stream opens with, without counting it as arriving in the last minute', () => {
    const store = new EventStore(1000, () => 0);
    store.add({ ...event(1), history: true });
    store.add({ ...event(2), history: true });
    store.add(event(3));
    expect(store.list().map((e) => e.id)).toEqual(['evt_3', 'evt_2', 'evt_1']);
    expect(store.total).toBe(3);
    expect(store.perMinute()).toBe(1);
  });
});
