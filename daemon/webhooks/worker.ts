import type { Clock } from '../../core/clock.js';
import { dialectOf, type Database } from '../../core/db/database.js';
import { FAN_OUT_BATCH, fanOutIn, leaseMs, recordAttempts, type DeliverySettings, type MadeAttempt } from '../../core/webhooks/delivery.js';
import { onEventCommitted } from '../../core/webhooks/outbox.js';
import { claimDueRunIn, releaseAllClaims, releaseClaims, type ClaimedDelivery } from '../../core/webhooks/repository.js';
import { threadSender, type SendingRun } from '../../core/webhooks/send-run.js';
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
  const sender = threadSender();
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
   * Sends a claimed run of one endpoint's events in order, on the sending thread (core/webhooks/send-run.ts): its
   * event loop waits for nothing else, so one endpoint's next event goes out as soon as the last is answered even
   * while this loop is busy. Answers are recorded together here, every RECORD_EVERY attempts or RECORD_AFTER_MS (one
   * commit for many deliveries), one batch at a time, while the next events go out. A daemon killed before it records
   * them sends them again from its next start, which at-least-once delivery allows. The first attempt that does not
   * succeed (or a stop, or a claim found lost) ends the run once everything made is recorded, and the claims of the
   * untried rest are released for their turn.
   */
  async function send(run: ClaimedDelivery[]): Promise<void> {
    let made: MadeAttempt[] = [];
    let since = performance.now();
    let recording: Promise<void> | undefined;
    let recordError: unknown;
    // An outcome other than success was recorded (a claim lost, or the run's failure): the run ends.
    let ended = false;
    let sending: SendingRun | undefined;
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
      if (ended || recordError !== undefined) sending?.halt();
    };
    const due = () => made.length >= RECORD_EVERY || (made.length > 0 && performance.now() - since >= RECORD_AFTER_MS);
    const startRecording = () => {
      const batch = made;
      made = [];
      since = performance.now();
      recording = record(batch).finally(() => {
        recording = undefined;
        // Answers that came meanwhile: the next batch, once it is due (the rest is recorded when the run ends).
        if (due()) startRecording();
      });
    };
    const { endpoint } = run[0];
    const settings = { timeoutMs: options.timeoutMs, allowPrivate: options.allowPrivate, userAgent: options.userAgent, clockOffsetMs: clock.now().getTime() - Date.now() };
    const items = run.map(({ event }) => ({ url: endpoint.url, id: event.id, body: event.payload, secret: endpoint.secret }));
    sending = sender.start(items, settings, (index, result) => {
      made.push({ claimed: run[index], result, at: clock.now() });
      if (!recording && due()) startRecording();
    }, abort.signal);
    if (stopped) sending.halt();
    const next = await sending.done;
    // Everything made is recorded before the untried rest is released; a batch that could not be recorded fails the
    // run (its claims lapse, and its events go out again after the lease).
    while (recording) await recording;
    if (made.length && recordError === undefined) await record(made.splice(0));
    if (recordError !== undefined) throw recordError;
    if (next < run.length) await releaseClaims(db, run.slice(next).map((c) => c.event.rowId), run[0].token);
  }

  /** Sends a claimed run in the background; when it ends, the worker looks again at once. */
  function start(run: ClaimedDelivery[]) {
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

  /**
   * The fan-out and the claims in one transaction, and the claimed runs sent once it commits. On SQLite that is one
   * turn at the single writer instead of one each (the fan-out, the claim that found a run, and the one that found
   * nothing more): under ingest every turn waits behind an ingest transaction, 40-90 ms each on this machine, and an
   * event committed meanwhile waited for all of them before it went out. On PostgreSQL it saves the begin and commit
   * round trips between the fan-out and the claim, on the way from an event's commit to its delivery. A fan-out that
   * took less than a full batch left nothing behind (an event committed since wakes the worker again; another daemon's
   * is found by the poll): a second one would find nothing.
   */
  async function fanOutAndFill(): Promise<void> {
    const runs: ClaimedDelivery[][] = [];
    await db.transaction(async (trx) => {
      while (!stopped && (await fanOutIn(trx, clock)) >= FAN_OUT_BATCH);
      while (!stopped && inFlight + runs.length < options.concurrency) {
        const run = await claimDueRunIn(trx, clock.now().getTime(), leaseMs(options), RUN_LENGTH);
        if (!run.length) break;
        runs.push(run);
      }
    });
    for (const run of runs) start(run);
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
        await fanOutAndFill();
      } catch (err) {
        fail(err, 'webhook fan-out and claim failed');
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
      await sender.close();
    },
  };
}
