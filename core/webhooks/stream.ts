import type { Database } from '../db/database.js';
import { dialectOf } from '../db/database.js';
import { EVENTS_CHANNEL, eventsAfter, eventsAt, latestEventSeq, onEventCommitted, type SequencedEvent } from './outbox.js';

/**
 * The live event stream of one daemon: it follows the outbox in `seq` order and hands each committed event to the
 * subscribers of its organization. It is woken when an event commits (in this process, or on PostgreSQL in any
 * daemon through LISTEN/NOTIFY) and polls as a fallback, so a missed signal delays an event, never loses it.
 *
 * `seq` is taken at insert, not at commit: on PostgreSQL a slow transaction may commit seq 10 after seq 11 was
 * seen. A hole in the sequence is therefore watched for GAP_WAIT_MS before it is taken for a rollback.
 */
export interface EventHub {
  readonly settings: StreamSettings;
  /** Resolves once the hub knows where the outbox ends; `position()` is valid from then on. */
  ready(): Promise<void>;
  /**
   * Everything at or below this position has been handed to subscribers (or is a hole still watched, which
   * is handed over when it fills). Read it right after subscribing to know where a replay must stop.
   */
  position(): number;
  /** Hands every event of the organization committed from now on to `listener`; `onClose` runs when the hub stops. */
  subscribe(organizationId: string, listener: (event: SequencedEvent) => void, onClose?: () => void): () => void;
  /** Ends every subscription and stops following the outbox. */
  close(): Promise<void>;
}

export interface StreamSettings {
  /** Fallback poll while anyone listens, in ms (a NOTIFY or a local commit wakes the hub sooner). */
  pollMs: number;
  /** Comment line sent on idle streams so proxies keep them open, in ms. */
  heartbeatMs: number;
}

export const DEFAULT_STREAM_SETTINGS: StreamSettings = { pollMs: 1000, heartbeatMs: 15_000 };

/** How long a hole in `seq` is watched for a late commit. */
export const GAP_WAIT_MS = 60_000;
const BATCH = 500;
const MAX_WATCHED_GAPS = 10_000;
const RELISTEN_MS = 2000;

interface Subscriber {
  organizationId: string;
  listener: (event: SequencedEvent) => void;
  onClose?: () => void;
}

const hubs = new WeakMap<Database, EventHub>();

/** The stream of the daemon using `db` (one per database handle); the first call's settings hold. */
export function eventHub(db: Database, settings: Partial<StreamSettings> = {}): EventHub {
  let hub = hubs.get(db);
  if (!hub) {
    hub = createHub(db, { ...DEFAULT_STREAM_SETTINGS, ...settings });
    hubs.set(db, hub);
  }
  return hub;
}

/** Stops the stream of `db`, if one was started (the daemon's shutdown, before the pool closes). */
export async function closeEventHub(db: Database): Promise<void> {
  const hub = hubs.get(db);
  hubs.delete(db);
  await hub?.close();
}

function createHub(db: Database, settings: StreamSettings): EventHub {
  const subscribers = new Set<Subscriber>();
  let cursor = 0;
  /** Holes below the cursor, with the time they were first seen. */
  const gaps = new Map<number, number>();
  let started: Promise<void> | undefined;
  let closed = false;
  let polling = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let stopLocal: (() => void) | undefined;
  let notifications: { end(): Promise<void> } | undefined;
  let relisten: NodeJS.Timeout | undefined;

  const dispatch = (event: SequencedEvent) => {
    for (const subscriber of subscribers) {
      if (subscriber.organizationId !== event.organizationId) continue;
      try {
        subscriber.listener(event);
      } catch {
        // One broken connection must not stop the others.
      }
    }
  };

  const poll = async () => {
    if (closed) return;
    if (polling) {
      again = true;
      return;
    }
    polling = true;
    try {
      do {
        again = false;
        const now = Date.now();
        for (const [seq, seen] of gaps) if (now - seen > GAP_WAIT_MS) gaps.delete(seq);
        const filled = await eventsAt(db, [...gaps.keys()]);
        const fresh = await eventsAfter(db, { afterSeq: cursor, limit: BATCH });
        if (closed) return;
        for (const event of filled) {
          gaps.delete(event.seq);
          dispatch(event);
        }
        for (const event of fresh) {
          for (let missing = cursor + 1; missing < event.seq && gaps.size < MAX_WATCHED_GAPS; missing++) gaps.set(missing, now);
          cursor = event.seq;
          dispatch(event);
        }
        if (fresh.length === BATCH) again = true;
      } while (again && !closed);
    } catch {
      // The database may be briefly unreachable; the next poll tries again.
    } finally {
      polling = false;
    }
  };

  const schedule = () => {
    clearTimeout(timer);
    if (closed || subscribers.size === 0) return;
    timer = setTimeout(async () => {
      await poll();
      schedule();
    }, settings.pollMs);
    timer.unref();
  };

  const listenForNotifications = async () => {
    if (closed || dialectOf(db) !== 'postgres') return;
    const { default: pg } = await import('pg');
    const connection = db.client.config.connection as string | Record<string, unknown>;
    const client = new pg.Client(typeof connection === 'string' ? { connectionString: connection } : connection);
    const retry = () => {
      notifications = undefined;
      client.end().catch(() => {});
      if (closed) return;
      relisten = setTimeout(() => void listenForNotifications().catch(retry), RELISTEN_MS);
      relisten.unref();
    };
    client.on('error', retry);
    client.on('notification', () => void poll());
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch {
      retry();
      return;
    }
    if (closed) {
      await client.end().catch(() => {});
      return;
    }
    notifications = client;
    // Events committed while no one listened are caught up by the poll.
    void poll();
  };

  const start = () =>
    (started ??= (async () => {
      cursor = await latestEventSeq(db);
      stopLocal = onEventCommitted(db, () => void poll());
      await listenForNotifications().catch(() => {});
    })());

  return {
    settings,
    ready: start,
    position: () => cursor,
    subscribe(organizationId, listener, onClose) {
      const subscriber: Subscriber = { organizationId, listener, onClose };
      subscribers.add(subscriber);
      void start();
      if (subscribers.size === 1) schedule();
      return () => {
        subscribers.delete(subscriber);
        if (subscribers.size === 0) clearTimeout(timer);
      };
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      clearTimeout(relisten);
      stopLocal?.();
      for (const subscriber of [...subscribers]) subscriber.onClose?.();
      subscribers.clear();
      await notifications?.end().catch(() => {});
      notifications = undefined;
    },
  };
}
