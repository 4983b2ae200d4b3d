import type { Clock } from '../../core/clock.js';
import { dialectOf, type Database } from '../../core/db/database.js';
import { attempt, fanOutEvents, leaseMs, recordAttempt, type DeliverySettings } from '../../core/webhooks/delivery.js';
import { claimDueDelivery, releaseAllClaims, releaseClaim, type ClaimedDelivery } from '../../core/webhooks/repository.js';
import type { Logger } from '../logger.js';

export interface WebhookWorkerOptions extends DeliverySettings {
  /** How often to look for new events and due retries when idle, in ms. */
  pollMs: number;
  /** Deliveries in flight at once (to different endpoints: one endpoint gets one at a time, in order). */
  concurrency: number;
}

export interface WebhookWorker {
  /** Looks for work now instead of at the next poll. */
  poke(): void;
  /** Stops claiming; in-flight requests are aborted and their claims released, so nothing is lost or doubled. */
  stop(): Promise<void>;
}

/**
 * The delivery worker inside tilld: copies committed outbox events to the endpoints that take them, then sends
 * due attempts, `concurrency` at a time. On PostgreSQL several daemons run one each and share the work (every
 * claim is FOR UPDATE SKIP LOCKED); on SQLite, one daemon owns the file, so claims left by a killed process
 * are released at start.
 */
export async function startWebhookWorker(deps: { db: Database; clock: Clock; logger: Logger }, options: WebhookWorkerOptions): Promise<WebhookWorker> {
  const { db, clock, logger } = deps;
  if (dialectOf(db) === 'sqlite') {
    const released = await releaseAllClaims(db);
    if (released) logger.info({ component: 'webhooks', released }, 'released webhook claims left by the previous run');
  }
  const abort = new AbortController();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight = 0;
  let scanning: Promise<void> | undefined;
  const running = new Set<Promise<unknown>>();

  const fail = (err: unknown, what: string) => {
    if (!stopped) logger.error({ component: 'webhooks', err }, what);
  };

  const schedule = (ms: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(tick, ms);
  };

  /** Sends one claimed attempt and records it (or, when stopping mid-send, releases the claim unrecorded). */
  async function send(claimed: ClaimedDelivery): Promise<void> {
    const result = await attempt(claimed, clock, options, abort.signal);
    if (abort.signal.aborted) {
      await releaseClaim(db, claimed.event.rowId, claimed.token);
      return;
    }
    const outcome = await recordAttempt(db, clock, claimed, result, options);
    if (outcome === 'disabled') {
      logger.warn({ component: 'webhooks', endpoint: claimed.endpoint.id, organization: claimed.endpoint.organizationId }, 'webhook endpoint disabled after repeated failures');
    }
  }

  /** Claims due attempts until `concurrency` are in flight or nothing is due; sends run in the background. */
  async function fill(): Promise<void> {
    while (!stopped && inFlight < options.concurrency) {
      const claimed = await claimDueDelivery(db, clock.now().getTime(), leaseMs(options));
      if (!claimed) return;
      inFlight++;
      const work: Promise<void> = send(claimed)
        .catch((err) => fail(err, 'webhook delivery failed'))
        .finally(() => {
          inFlight--;
          running.delete(work);
          // A finished attempt may make the endpoint's next event due: look again straight away.
          schedule(0);
        });
      running.add(work);
    }
  }

  let again = false;
  function tick() {
    if (stopped) return;
    if (scanning) {
      again = true;
      return;
    }
    again = false;
    scanning = (async () => {
      try {
        while (!stopped && (await fanOutEvents(db, clock)) > 0);
      } catch (err) {
        fail(err, 'webhook fan-out failed');
      }
      try {
        await fill();
      } catch (err) {
        fail(err, 'webhook claim failed');
      }
    })().finally(() => {
      scanning = undefined;
      schedule(again ? 0 : options.pollMs);
    });
  }

  schedule(0);
  return {
    poke: () => schedule(0),
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      abort.abort();
      await scanning;
      await Promise.allSettled([...running]);
    },
  };
}
