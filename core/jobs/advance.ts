import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { CoreError } from '../errors.js';
import type { PaymentProcessor } from '../payments/processor.js';
import type { Mailer } from '../mail/mailer.js';
import { clockState, moveClockForward, offsetClock, saveClockState, type OrganizationClockState } from './clock.js';
import { claimDueJob, jobHeldElsewhere, runClaimedJob, type JobHandlers } from './jobs.js';

/** The most jobs one advance runs: a year of daily work for a few hundred objects, and a stop for runaway loops. */
export const MAX_JOBS_PER_ADVANCE = 100_000;
/** How long an advance waits for due jobs another worker is running before it answers without them. */
export const HELD_JOB_WAIT_MS = 60_000;

export interface AdvanceResult {
  organizationId: string;
  /** The organization's clock before and after. */
  from: Date;
  to: Date;
  /** Jobs run, in order, and how many of them failed (failures are retried later, like any job). */
  jobsRun: number;
  jobsFailed: number;
}

/** Marks an organization as sandbox (its clock can be advanced) or not; a clock already moved stays moved. */
export async function setSandbox(db: Database, base: Clock, organizationId: string, sandbox: boolean): Promise<OrganizationClockState> {
  return db.transaction(async (trx) => {
    const state = await clockState(trx, organizationId, { forUpdate: true });
    if (!sandbox && state.offsetMs !== 0) {
      throw new CoreError('conflict', 'CLOCK_ADVANCED', 'This organization’s test clock has been advanced; it stays a sandbox organization');
    }
    const next = { ...state, sandbox };
    await saveClockState(trx, next, base.now());
    return next;
  });
}

/** The tail of each organization's queue of clock advances in this process. */
const advancing = new Map<string, Promise<unknown>>();

/**
 * Runs `work` once every earlier advance of the organization's clock in this process has finished: concurrent
 * advances are taken one after another, each from where the previous one left the clock. (Across processes the
 * clock still never moves back: moveClockForward is a guarded update.)
 */
export async function oneAdvanceAtATime<T>(organizationId: string, work: () => Promise<T>): Promise<T> {
  const previous = advancing.get(organizationId) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.catch(() => undefined);
  advancing.set(organizationId, tail);
  try {
    return await run;
  } finally {
    if (advancing.get(organizationId) === tail) advancing.delete(organizationId);
  }
}

/**
 * Moves a sandbox organization's clock to `target`, running every job of the organization due by then in time
 * order, each with the clock set to the moment it was due: renewals, dunning retries, expiries, benefit cycles.
 * What a job schedules before `target` runs in the same advance, so a year of renewals happens in one call.
 */
export async function advanceOrganizationClock(
  deps: { db: Database; clock: Clock; payments: PaymentProcessor; baseUrl: string; mailer?: Mailer; handlers: JobHandlers; onError?: (error: unknown) => void },
  organizationId: string,
  target: Date,
): Promise<AdvanceResult> {
  const { db, clock: base } = deps;
  const state = await clockState(db, organizationId);
  if (!state.sandbox) {
    throw new CoreError('conflict', 'NOT_SANDBOX', 'Only a sandbox organization’s clock can be advanced; mark it sandbox first (PATCH …/clock {"sandbox": true})');
  }
  const from = new Date(base.now().getTime() + state.offsetMs);
  if (target.getTime() <= from.getTime()) {
    throw new CoreError('invalid', 'CLOCK_BACKWARDS', 'A test clock only moves forward', [
      { loc: ['body', 'to'], msg: `Choose a time after the organization's current time, ${from.toISOString()}`, type: 'value_error' },
    ]);
  }
  let offsetMs = state.offsetMs;
  const moveTo = async (at: number) => {
    const next = at - base.now().getTime();
    // Never backwards: jobs already due before the current time run at the current time.
    if (next > offsetMs) {
      offsetMs = next;
      await moveClockForward(db, organizationId, offsetMs, base.now());
    }
  };

  let jobsRun = 0;
  // A job that fails is retried by later advances or the daemon's runner, not over and over within this one.
  const failed: string[] = [];
  // How long (in real time) the advance waits, at most, for a due job another worker holds (a hung worker's lease runs out later).
  const waitUntil = Date.now() + HELD_JOB_WAIT_MS;
  while (jobsRun < MAX_JOBS_PER_ADVANCE) {
    const claimed = await claimDueJob(db, base.now().getTime(), { organizationId, dueByMs: target.getTime(), excludeIds: failed });
    if (!claimed) {
      // A job due by the target that the daemon's runner took as it came due (PostgreSQL, or another daemon): the
      // advance answers once it is done, and runs what it schedules, so its caller sees its effects (a mail, a charge).
      if (Date.now() < waitUntil && (await jobHeldElsewhere(db, organizationId, target.getTime(), base.now().getTime(), failed))) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      break;
    }
    await moveTo(claimed.job.runAt.getTime());
    const outcome = await runClaimedJob({ ...deps, onError: (_job, error) => deps.onError?.(error) }, claimed, offsetClock(base, offsetMs));
    jobsRun++;
    if (outcome === 'failed') failed.push(claimed.job.id);
  }
  if (jobsRun >= MAX_JOBS_PER_ADVANCE) {
    throw new CoreError('conflict', 'TOO_MANY_JOBS', `More than ${MAX_JOBS_PER_ADVANCE} jobs were due; advance in smaller steps`);
  }
  await moveTo(target.getTime());
  return { organizationId, from, to: new Date(base.now().getTime() + offsetMs), jobsRun, jobsFailed: failed.length };
}
