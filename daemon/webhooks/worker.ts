import type { Clock } from '../../core/clock.js';
import { dialectOf, type Database } from '../../core/db/database.js';
import { attempt, FAN_OUT_BATCH, fanOutEvents, leaseMs, recordAttempts, type DeliverySettings, type MadeAttempt } from '../../core/webhooks/delivery.js';
import { onEventCommitted } from '../../core/webhooks/outbox.js';
import { claimDueRun, releaseAllClaims, releaseClaims, type ClaimedDelivery } from '../../core/webhooks/repository.js';
import type { Logger } from '../logger.js';

export interface WebhookWorkerOptions extends DeliverySettings {
  /** How often to look for new events and due retries when idle, in ms. */
  pollMs: number;
  /** Deliveries in flight at once (to different endpoints: one endpoint gets one at a time, in order). */
  concurrency: number;
}

/**
 * How many due events of one endpoint one claim takes. They go out one after another, each recorded as it is
 * answered: one claim instead of one per event, and the connection stays warm.
 */
const RUN_LENGTH = 100;
/** A run's answers are recorded in one transaction every this many attempts, or this often. */
const RECORD_EVERY = 50;
const RECORD_AFTER_MS = 25;

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

  /**
   * Sends a claimed run of one endpoint's events in order. Answers are recorded together, every RECORD_EVERY
   * attempts or RECORD_AFTER_MS (one commit for many deliveries), while the next events go out: a batch is written
   * in the background, one at a time, and sending waits for it only when another batch is already full. A daemon
   * killed before it records them sends them again from its next start, which at-least-once delivery allows. The
   * first attempt that does not succeed (or a stop, or a claim found lost) ends the run once everything made is
   * recorded, and the claims of the untried rest are released for their turn.
   */
  async function send(run: ClaimedDelivery[]): Promise<void> {
    const started = performance.now();
    let made: MadeAttempt[] = [];
    let since = started;
    let recording: Promise<void> | undefined;
    let recordError: unknown;
    // An outcome other than success was recorded (a claim lost, or the run's failure): the run ends.
    let ended = false;
    const record = async (batch: MadeAttempt[]) => {
      try {
        const outcomes = await recordAttempts(db, batch, options);
        outcomes.forEach((outcome, i) => {
          if (outcome === 'succeeded') return;
          ended = true;
          if (outcome !== 'disabled') return;
          const { endpoint } = batch[i].claimed;
          logger.warn({ component: 'webhooks', endpoint: endpoint.id, organization: endpoint.organizationId }, 'webhook endpoint disabled after repeated failures');
        });
      } catch (err) {
        recordError ??= err;
      }
    };
    const startRecording = () => {
      const batch = made;
      made = [];
      since = performance.now();
      recording = record(batch).finally(() => {
        recording = undefined;
      });
    };
    // Waits for the batch in flight and records the rest; a batch that could not be recorded fails the run (its
    // claims lapse, and its events go out again after the lease).
    const finish = async () => {
      await recording;
      if (made.length && recordError === undefined) await record(made);
      if (recordError !== undefined) throw recordError;
    };
    const release = (from: number) => releaseClaims(db, run.slice(from).map((c) => c.event.rowId), run[0].token);
    for (let i = 0; i < run.length; i++) {
      // The run shares one lease (leaseMs: twice the attempt limit and more): start an attempt only while it can end within it.
      if (i > 0 && (stopped || ended || recordError !== undefined || performance.now() - started > options.timeoutMs)) {
        await finish();
        return release(i);
      }
      const claimed = run[i];
      const result = await attempt(claimed, clock, options, abort.signal);
      if (abort.signal.aborted) {
        await finish();
        return release(i);
      }
      made.push({ claimed, result, at: clock.now() });
      if (!result.succeeded) {
        await finish();
        return release(i + 1);
      }
      if (made.length >= RECORD_EVERY || performance.now() - since >= RECORD_AFTER_MS) {
        // One batch in flight at a time; the next fills meanwhile and waits for it only once full.
        if (recording && made.length >= RECORD_EVERY) await recording;
        if (!recording) startRecording();
      }
    }
    await finish();
  }

  /** Claims runs of due attempts until `concurrency` endpoints are being sent to or nothing is due; sends run in the background. */
  async function fill(): Promise<void> {
    while (!stopped && inFlight < options.concurrency) {
      const run = await claimDueRun(db, clock.now().getTime(), leaseMs(options), RUN_LENGTH);
      if (!run.length) return;
      inFlight++;
      const work: Promise<void> = send(run)
        .catch((err) => fail(err, 'webhook delivery failed'))
        .finally(() => {
          inFlight--;
          running.delete(work);
          // A finished run may make the endpoint's next event due: look again straight away.
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
        // A fan-out that took less than a full batch left nothing behind (an event committed since wakes the worker
        // again; another daemon's is found by the poll): a second one, in the way of the first delivery, would find nothing.
        while (!stopped && (await fanOutEvents(db, clock)) >= FAN_OUT_BATCH);
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

  // An event committed through this daemon's pool is looked at at once, not at the next poll.
  const stopHearing = onEventCommitted(db, () => schedule(0));
  schedule(0);
  return {
    poke: () => schedule(0),
    stop: async () => {
      stopped = true;
      stopHearing();
      if (timer) clearTimeout(timer);
      abort.abort();
      await scanning;
      await Promise.allSettled([...running]);
    },
  };
}
