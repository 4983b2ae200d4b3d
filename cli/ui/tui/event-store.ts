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
  /**
   * Arrivals per second over the last minute, for the per-minute rate: a ring of 60 counts, slot = second % 60, each
   * with the second it counts. (One timestamp per event grew by 8 KB a second at 1,000 events/s while no view read
   * the rate, which only the Events tab does.)
   */
  private readonly perSecond = Array.from({ length: 60 }, () => ({ second: -1, count: 0 }));
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
    if (!event.history) {
      const second = Math.floor(this.now() / 1000);
      const slot = this.perSecond[((second % 60) + 60) % 60]!;
      if (slot.second !== second) {
        slot.second = second;
        slot.count = 0;
      }
      slot.count += 1;
    }
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

  /** Events that arrived in the last 60 s (by whole seconds: this second and the 59 before it). */
  perMinute(): number {
    const now = Math.floor(this.now() / 1000);
    let count = 0;
    for (const slot of this.perSecond) if (slot.second > now - 60 && slot.second <= now) count += slot.count;
    return count;
  }
}
