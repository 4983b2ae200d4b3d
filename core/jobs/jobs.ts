import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import type { Database, Executor } from '../db/database.js';
import { dialectOf } from '../db/database.js';
import { fromDbInt, newId, toDbTime } from '../db/columns.js';
import type { PaymentProcessor } from '../payments/processor.js';
import { processorFor } from '../payments/select.js';
import type { Mailer } from '../mail/mailer.js';
import { clockState, offsetClock } from './clock.js';

const TABLE = 'jobs';

/** A pending piece of time-driven work about one object (its subject). */
export interface Job {
  id: string;
  organizationId: string;
  kind: string;
  subjectId: string;
  runAt: Date;
  attempts: number;
}

/** What a job handler is given: the organization's clock (moved to the job's time by a test-clock advance). */
export interface JobContext {
  db: Database;
  clock: Clock;
  payments: PaymentProcessor;
  /** The daemon's public URL, for links inside the events a job records (media, checkout URLs). */
  baseUrl: string;
  /** The daemon's mailer, for mails a job sends (a pay link); absent, such mails go to the local outbox. */
  mailer?: Mailer;
  /**
   * The runner's time (its own clock, not the organization's) when it claimed the job: more jobs a handler claims
   * with claimDueJobsOfKind share the claim's lease from then. Absent when a handler is called directly (tests).
   */
  claimedAtMs?: number;
}

/**
 * Does the work of a job. It runs at least once per scheduling (a crash before the job is marked done runs it
 * again), so it must be idempotent: re-read the subject, act only if the work is still due. It may schedule
 * the next occurrence of its own kind and subject (a renewal schedules the next renewal).
 */
export type JobHandler = (context: JobContext, job: Job) => Promise<void>;
export type JobHandlers = Readonly<Record<string, JobHandler>>;

/**
 * How long a claim holds before another worker may take the job over (its worker died mid-job: a killed daemon,
 * a lost host). Short, so that a payment's settle job claimed by a daemon killed mid-call is not stuck for long;
 * a worker still running the job renews its claim every JOB_LEASE_RENEW_MS (a processor call may take a while).
 */
export const JOB_LEASE_MS = 15_000;
export const JOB_LEASE_RENEW_MS = 5_000;

/** Retry delay after a handler throws: 30 s doubling per attempt, at most an hour. */
export const retryDelayMs = (attempts: number) => Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 60 * 60 * 1000);

/**
 * Schedules `kind` for `subjectId` at `runAt`, replacing any pending job of the same kind and subject.
 * Call it in the transaction of the change that makes the work due.
 */
export async function scheduleJob(trx: Executor, job: { organizationId: string; kind: string; subjectId: string; runAt: Date }): Promise<void> {
  await trx(TABLE)
    .insert({
      id: newId(),
      organization_id: job.organizationId,
      kind: job.kind,
      subject_id: job.subjectId,
      run_at_ms: job.runAt.getTime(),
      attempts: 0,
      locked_by: null,
      locked_until_ms: null,
      last_error: null,
      created_at: toDbTime(new Date()),
    })
    .onConflict(['kind', 'subject_id'])
    // A reschedule releases any claim: the worker that holds it will find its claim gone and leave the row.
    .merge({ run_at_ms: job.runAt.getTime(), attempts: 0, locked_by: null, locked_until_ms: null, last_error: null });
}

/** In-process signal that jobs were scheduled (carries when the earliest is due): the runner of that pool wakes for it. */
const scheduled = new EventEmitter().setMaxListeners(0);

/**
 * Wakes this pool's job runner when `trx` commits, for work due at `runAtMs` that should not wait for the next
 * poll (a customer's meters after an ingest). Other daemons find it at their poll.
 */
export function wakeJobRunnerOnCommit(trx: Executor, runAtMs: number): void {
  const announce = () => scheduled.emit('jobs', runAtMs, trx.client.config);
  const done = (trx as Partial<Knex.Transaction>).executionPromise;
  if (done) done.then(announce, () => {});
  else queueMicrotask(announce);
}

function onJobsScheduled(db: Executor, listener: (runAtMs: number) => void): () => void {
  const source = db.client.config;
  const handler = (runAtMs: number, from: unknown) => {
    if (from === source) listener(runAtMs);
  };
  scheduled.on('jobs', handler);
  return () => scheduled.off('jobs', handler);
}

/** Drops the pending job of this kind and subject, if any (a canceled renewal, a paid checkout). */
export async function cancelJob(trx: Executor, kind: string, subjectId: string): Promise<void> {
  await trx(TABLE).where({ kind, subject_id: subjectId }).delete();
}

/** The pending job of this kind and subject, if any (tests, and `till clock` showing what is due). */
export async function findJob(db: Executor, kind: string, subjectId: string): Promise<Job | undefined> {
  const row = await db(TABLE).where({ kind, subject_id: subjectId }).first();
  return row ? toJob(row) : undefined;
}

export async function listJobs(db: Executor, organizationId: string): Promise<Job[]> {
  const rows = await db(TABLE).where({ organization_id: organizationId }).orderBy([{ column: 'run_at_ms' }, { column: 'id' }]);
  return rows.map(toJob);
}

function toJob(row: Record<string, unknown>): Job {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    kind: String(row.kind),
    subjectId: String(row.subject_id),
    runAt: new Date(fromDbInt(row.run_at_ms)),
    attempts: fromDbInt(row.attempts),
  };
}

interface Claimed {
  job: Job;
  token: string;
  offsetMs: number;
  /** The runner's time the claim was made at (its lease runs from then). */
  claimedAtMs: number;
}

/**
 * Claims the earliest due job: due when its time has come on its organization's clock. On PostgreSQL the claim
 * skips rows another daemon is claiming (FOR UPDATE SKIP LOCKED), so each job is taken by exactly one worker;
 * SQLite has one writer and needs no more than the transaction.
 */
export async function claimDueJob(
  db: Database,
  nowMs: number,
  filter: { organizationId?: string; dueByMs?: number; excludeIds?: readonly string[] } = {},
): Promise<Claimed | undefined> {
  const due = (q: Knex.QueryBuilder) => {
    q.from(TABLE)
      .leftJoin('organization_clocks as c', 'c.organization_id', `${TABLE}.organization_id`)
      .where((w) => w.whereNull(`${TABLE}.locked_until_ms`).orWhere(`${TABLE}.locked_until_ms`, '<', nowMs))
      .orderBy([{ column: `${TABLE}.run_at_ms` }, { column: `${TABLE}.id` }])
      .limit(1);
    if (filter.organizationId) {
      // A test-clock advance: everything of this organization due by the target time, in order.
      q.where(`${TABLE}.organization_id`, filter.organizationId).where(`${TABLE}.run_at_ms`, '<=', filter.dueByMs ?? nowMs);
    } else {
      q.whereRaw(`${TABLE}.run_at_ms <= ? + coalesce(c.offset_ms, 0)`, [nowMs]);
    }
    if (filter.excludeIds?.length) q.whereNotIn(`${TABLE}.id`, filter.excludeIds);
    return q;
  };
  const token = randomUUID();
  const lease = { locked_by: token, locked_until_ms: nowMs + JOB_LEASE_MS };
  let row: Record<string, unknown> | undefined;
  if (dialectOf(db) === 'postgres') {
    row = await db.transaction(async (trx) => {
      const query = trx.select(`${TABLE}.*`).first();
      due(query).forUpdate(TABLE).skipLocked();
      const found = await query;
      if (found) await trx(TABLE).where({ id: found.id }).update(lease);
      return found;
    });
  } else {
    // SQLite: one statement claims atomically (a read-then-write transaction could deadlock between connections).
    [row] = await db(TABLE).whereIn('id', due(db.select(`${TABLE}.id`))).update(lease).returning('*');
  }
  if (!row) return undefined;
  const { offsetMs } = await clockState(db, String(row.organization_id));
  return { job: toJob(row), token, offsetMs, claimedAtMs: nowMs };
}

/**
 * Claims up to `limit` more jobs of one kind and organization due by `dueByMs` (on its clock), as claimDueJob does one:
 * a handler that does the same work for many subjects at once (a customer meter refresh after an ingest touched a
 * hundred customers) takes them in one pass instead of one connection round each. The caller runs them, then
 * finishes them with finishClaimedJobs (or lets the lease run out if it dies).
 */
export async function claimDueJobsOfKind(
  db: Database,
  filter: { kind: string; organizationId: string; dueByMs: number; nowMs: number; limit: number; excludeIds?: readonly string[] },
): Promise<{ jobs: Job[]; token: string }> {
  const token = randomUUID();
  const lease = { locked_by: token, locked_until_ms: filter.nowMs + JOB_LEASE_MS };
  const due = (q: Knex.QueryBuilder) => {
    q.from(TABLE)
      .where({ kind: filter.kind, organization_id: filter.organizationId })
      .where('run_at_ms', '<=', filter.dueByMs)
      .where((w) => w.whereNull('locked_until_ms').orWhere('locked_until_ms', '<', filter.nowMs))
      .orderBy([{ column: 'run_at_ms' }, { column: 'id' }])
      .limit(filter.limit);
    if (filter.excludeIds?.length) q.whereNotIn('id', filter.excludeIds);
    return q;
  };
  let rows: Record<string, unknown>[];
  if (dialectOf(db) === 'postgres') {
    rows = await db.transaction(async (trx) => {
      const found: Record<string, unknown>[] = await due(trx.select('*')).forUpdate().skipLocked();
      if (found.length) await trx(TABLE).whereIn('id', found.map((row) => String(row.id))).update(lease);
      return found;
    });
  } else {
    rows = await db(TABLE).whereIn('id', due(db.select('id'))).update(lease).returning('*');
  }
  return { jobs: rows.map(toJob), token };
}

/**
 * Ends jobs claimed by claimDueJobsOfKind: removed when done, released for another run when not. On PostgreSQL a
 * row locked meanwhile is left alone: the one thing that locks a claimed job is a reschedule of it in flight (an
 * ingest marking the customer dirty again), which releases the claim itself when it commits. Waiting for it instead
 * could deadlock: the statement locks the rows it has passed in its own order, an ingest locks them sorted.
 */
export async function finishClaimedJobs(db: Executor, token: string, outcome: 'done' | 'failed'): Promise<void> {
  const claimed = db(TABLE).where({ locked_by: token });
  if (dialectOf(db) === 'postgres') claimed.whereIn('id', db(TABLE).select('id').where({ locked_by: token }).forUpdate().skipLocked());
  if (outcome === 'done') await claimed.delete();
  else await claimed.update({ locked_by: null, locked_until_ms: null });
}

/**
 * Whether a job of the organization due by `dueByMs` (on its clock) is held right now by another worker: a daemon's
 * runner took it as it came due, and has not finished it.
 */
export async function jobHeldElsewhere(db: Executor, organizationId: string, dueByMs: number, nowMs: number, excludeIds: readonly string[] = []): Promise<boolean> {
  const query = db(TABLE).where({ organization_id: organizationId }).where('run_at_ms', '<=', dueByMs).where('locked_until_ms', '>=', nowMs).first('id');
  if (excludeIds.length) query.whereNotIn('id', excludeIds);
  return Boolean(await query);
}

/**
 * Releases every claim: on SQLite one daemon owns the file, so a claim found at start was left by a previous run
 * that was killed mid-job, and its job is due again at once instead of when the lease runs out. Answers how many.
 */
export async function releaseAllJobClaims(db: Executor): Promise<number> {
  return db(TABLE).whereNotNull('locked_by').update({ locked_by: null, locked_until_ms: null });
}

/** Runs a claimed job, then removes it, or on failure releases it for a later retry. */
export async function runClaimedJob(
  deps: { db: Database; payments: PaymentProcessor; livePayments?: PaymentProcessor | null; baseUrl: string; mailer?: Mailer; handlers: JobHandlers; onError?: (job: Job, error: unknown) => void },
  claimed: Claimed,
  clock: Clock,
): Promise<'done' | 'failed'> {
  const { db, handlers } = deps;
  const { job, token } = claimed;
  const handler = handlers[job.kind];
  // While the handler runs, the claim moves on with real time (relative to the claim's own clock: tests' clocks stand still).
  const renewal = setInterval(() => {
    db(TABLE)
      .where({ id: job.id, locked_by: token })
      .update({ locked_until_ms: db.raw('locked_until_ms + ?', [JOB_LEASE_RENEW_MS]) })
      .catch(() => undefined);
  }, JOB_LEASE_RENEW_MS);
  renewal.unref();
  try {
    if (!handler) throw new Error(`No handler for jobs of kind ${job.kind}`);
    // Each organization's jobs go through its own processor: the sandbox, or Stripe (core/payments/select.ts).
    await handler({ db, clock, payments: await processorFor(db, deps, job.organizationId), baseUrl: deps.baseUrl, mailer: deps.mailer, claimedAtMs: claimed.claimedAtMs }, job);
    // Removed only if still ours: a handler that rescheduled its own kind and subject released the claim.
    await db(TABLE).where({ id: job.id, locked_by: token }).delete();
    return 'done';
  } catch (error) {
    deps.onError?.(job, error);
    const attempts = job.attempts + 1;
    await db(TABLE)
      .where({ id: job.id, locked_by: token })
      .update({
        attempts,
        run_at_ms: clock.now().getTime() + retryDelayMs(attempts),
        locked_by: null,
        locked_until_ms: null,
        last_error: error instanceof Error ? error.message.slice(0, 1000) : String(error).slice(0, 1000),
      });
    return 'failed';
  } finally {
    clearInterval(renewal);
  }
}

/** Runs every job that is due now (on each organization's clock); answers how many ran. */
export async function runDueJobs(
  deps: { db: Database; clock: Clock; payments: PaymentProcessor; livePayments?: PaymentProcessor | null; baseUrl: string; mailer?: Mailer; handlers: JobHandlers; onError?: (job: Job, error: unknown) => void },
  options: { limit?: number } = {},
): Promise<number> {
  let ran = 0;
  const limit = options.limit ?? 100;
  while (ran < limit) {
    const claimed = await claimDueJob(deps.db, deps.clock.now().getTime());
    if (!claimed) break;
    await runClaimedJob(deps, claimed, offsetClock(deps.clock, claimed.offsetMs));
    ran++;
  }
  return ran;
}

/** Polls for due jobs until stopped; one per daemon (several daemons on PostgreSQL share the work). */
export function startJobRunner(
  deps: { db: Database; clock: Clock; payments: PaymentProcessor; livePayments?: PaymentProcessor | null; baseUrl: string; mailer?: Mailer; handlers: JobHandlers; onError?: (job: Job, error: unknown) => void },
  options: { intervalMs?: number } = {},
): { stop(): Promise<void>; poke(): void } {
  const intervalMs = options.intervalMs ?? 1000;
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;
  const schedule = (delayMs: number) => {
    if (stopped) return;
    const at = Date.now() + delayMs;
    if (timer && timerAt <= at) return;
    if (timer) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(tick, delayMs);
  };
  const tick = () => {
    timer = undefined;
    timerAt = Infinity;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    again = false;
    running = runDueJobs(deps)
      .then((ran) => {
        // A full round: more may be due at once.
        if (ran >= 100) again = true;
      })
      .catch((error) => deps.onError?.({ id: '', organizationId: '', kind: 'runner', subjectId: '', runAt: new Date(), attempts: 0 }, error))
      .finally(() => {
        running = undefined;
        schedule(again ? 0 : intervalMs);
      });
  };
  // Work scheduled through this pool wakes the runner when it is due, instead of at the next poll.
  const stopHearing = onJobsScheduled(deps.db, (runAtMs) => schedule(Math.min(intervalMs, Math.max(0, runAtMs - deps.clock.now().getTime()))));
  schedule(intervalMs);
  return {
    poke: () => schedule(0),
    stop: async () => {
      stopped = true;
      stopHearing();
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
