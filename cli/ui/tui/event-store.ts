import type { StreamEvent } from './backend.js';

/** How many events the Events tab keeps; older ones are dropped (the counters keep counting). */
export const MAX_EVENTS = 1000;

/**
 * The Events tab's model, outside React: events arrive at any rate and are appended here; the view reads a
 * snapshot at most every frame (see useEventStore), so 1,000 events per second cost one render per frame.
 * Keeps the newest MAX_EVENTS, counts per type and per minute, skips ids seen again after a reconnect.
 */
export class EventStore {
  /** Oldest first; the view reverses. */
  private events: StreamEvent[] = [];
  private readonly seen = new Set<string>();
  private readonly seenOrder: string[] = [];
  readonly counts = new Map<string, number>();
  /** Arrival times (ms) within the last minute, for the per-minute rate. */
  private recent: number[] = [];
  total = 0;
  /** Bumped on every change; the view re-renders when it moves. */
  version = 0;

  constructor(private readonly limit = MAX_EVENTS, private readonly now: () => number = Date.now) {}

  add(event: StreamEvent): boolean {
    if (this.seen.has(event.id)) return false;
    this.seen.add(event.id);
    this.seenOrder.push(event.id);
    if (this.seenOrder.length > this.limit * 10) this.seen.delete(this.seenOrder.shift()!);
    this.events.push(event);
    if (this.events.length > this.limit * 2) this.events = this.events.slice(-this.limit);
    this.counts.set(event.type, (this.counts.get(event.type) ?? 0) + 1);
    this.total += 1;
    // History the stream opened with happened before now: it does not count as arriving this minute.
    if (!event.history) this.recent.push(this.now());
    this.version += 1;
    return true;
  }

  /** The kept events, newest first, that match a filter (type or any text of the payload, case-insensitive). */
  list(filter = ''): StreamEvent[] {
    const kept = this.events.length > this.limit ? this.events.slice(-this.limit) : this.events;
    const needle = filter.trim().toLowerCase();
    const out: StreamEvent[] = [];
    for (let i = kept.length - 1; i >= 0; i -= 1) {
      const event = kept[i]!;
      if (!needle || event.type.toLowerCase().includes(needle) || JSON.stringify(event.payload).toLowerCase().includes(needle)) out.push(event);
    }
    return out;
  }

  get size(): number {
    return Math.min(this.events.length, this.limit);
  }

  /** Events that arrived in the last 60 s. */
  perMinute(): number {
    const since = this.now() - 60_000;
    let first = 0;
    while (first < this.recent.length && this.recent[first]! < since) first += 1;
    if (first > 0) this.recent = this.recent.slice(first);
    return this.recent.length;
  }
}
