import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { newId } from '../db/columns.js';
import { migrateToLatest } from '../db/migrate.js';
import type { PaymentProcessor } from '../payments/processor.js';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { race } from '../testing/race.js';
import { advanceOrganizationClock, setSandbox } from './advance.js';
import { clockState, organizationClock } from './clock.js';
import { claimDueJob, claimDueJobsOfKind, finishClaimedJobs, findJob, JOB_LEASE_MS, listJobs, releaseAllJobClaims, runClaimedJob, runDueJobs, scheduleJob, type Job, type JobHandlers } from './jobs.js';
import { applyClockStep } from './step.js';
import { addInterval } from '../billing/shared/time.js';

let database: TestDatabase;
const START = new Date('2026-01-31T12:00:00.000Z');
const unusedPayments = {} as PaymentProcessor;

async function newOrganization(): Promise<string> {
  const id = newId();
  await database.db('organization').insert({ id, name: 'Clock Co', slug: `clock-${id}`, createdAt: new Date().toISOString() });
  return id;
}

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateToLatest(database.db);
});
afterAll(async () => {
  await database?.destroy();
});

describe('calendar steps', () => {
  it('keeps the anchor day of month, clamped to short months, so periods never drift', () => {
    const anchor = new Date('2026-01-31T09:30:00.000Z');
    expect(addInterval(anchor, 'month', 1).toISOString()).toBe('2026-02-28T09:30:00.000Z');
    expect(addInterval(anchor, 'month', 2).toISOString()).toBe('2026-03-31T09:30:00.000Z');
    expect(addInterval(anchor, 'month', 13).toISOString()).toBe('2027-02-28T09:30:00.000Z');
    expect(addInterval(new Date('2028-02-29T00:00:00Z'), 'year', 1).toISOString()).toBe('2029-02-28T00:00:00.000Z');
    expect(addInterval(anchor, 'week', 2).toISOString()).toBe('2026-02-14T09:30:00.000Z');
  });

  it('reads test-clock steps such as +1month, +2 weeks and +12h, and refuses anything else', () => {
    expect(applyClockStep(START, '+1month')?.toISOString()).toBe('2026-02-28T12:00:00.000Z');
    expect(applyClockStep(START, '+2 weeks')?.toISOString()).toBe('2026-02-14T12:00:00.000Z');
    expect(applyClockStep(START, '12h')?.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(applyClockStep(START, '+1y')?.toISOString()).toBe('2027-01-31T12:00:00.000Z');
    for (const bad of ['', 'soon', '+0d', '-1d', '+1 fortnight', '+1.5d']) expect(applyClockStep(START, bad), bad).toBeUndefined();
  });
});

describe('jobs', () => {
  it('claims the due jobs of one kind and organization in one go, and removes or releases them when finished', async () => {
    const organizationId = await newOrganization();
    const other = await newOrganization();
    const due = new Date(START.getTime() - 1000);
    const batch = ['a', 'b', 'c'].map((subject) => `${organizationId}-${subject}`);
    for (const subjectId of batch) await scheduleJob(database.db, { organizationId, kind: 'test.batch', subjectId, runAt: due });
    await scheduleJob(database.db, { organizationId, kind: 'test.batch', subjectId: `${organizationId}-later`, runAt: new Date(START.getTime() + 60_000) });
    await scheduleJob(database.db, { organizationId, kind: 'test.other', subjectId: `${organizationId}-other-kind`, runAt: due });
    await scheduleJob(database.db, { organizationId: other, kind: 'test.batch', subjectId: `${other}-a`, runAt: due });
    const claim = (limit: number) => claimDueJobsOfKind(database.db, { kind: 'test.batch', organizationId, dueByMs: START.getTime(), nowMs: Date.now(), limit });
    const first = await claim(2);
    expect(first.jobs).toHaveLength(2);
    const second = await claim(10);
    // Claimed ones are not claimed again; the later job, another kind and another organization's stay.
    const rest = batch.filter((subject) => !first.jobs.some((job) => job.subjectId === subject));
    expect(second.jobs.map((job) => job.subjectId)).toEqual(rest);
    await finishClaimedJobs(database.db, first.token, 'done');
    await finishClaimedJobs(database.db, second.token, 'failed');
    expect((await listJobs(database.db, organizationId)).map((job) => job.subjectId).sort()).toEqual([...rest, `${organizationId}-later`, `${organizationId}-other-kind`].sort());
    const again = await claim(10);
    expect(again.jobs.map((job) => job.subjectId)).toEqual(rest);
    await finishClaimedJobs(database.db, again.token, 'done');
    // Leave nothing due for the tests that run every due job.
    await database.db('jobs').whereIn('organization_id', [organizationId, other]).delete();
  });

  it.skipIf(process.env.TILL_TEST_DATABASE_URL === undefined)('on PostgreSQL, finishes claimed jobs without waiting for a reschedule in flight, which keeps its job', async () => {
    const organizationId = await newOrganization();
    const due = new Date(START.getTime() - 1000);
    const subjects = ['a', 'b', 'c'].map((subject) => `${organizationId}-${subject}`);
    for (const subjectId of subjects) await scheduleJob(database.db, { organizationId, kind: 'test.batch', subjectId, runAt: due });
    const claim = await claimDueJobsOfKind(database.db, { kind: 'test.batch', organizationId, dueByMs: START.getTime(), nowMs: START.getTime(), limit: 10 });
    expect(claim.jobs).toHaveLength(3);
    // Given: a transaction (an ingest) is rescheduling the middle one and has not committed yet.
    let commit!: () => void;
    const held = new Promise<void>((resolve) => (commit = resolve));
    let rescheduled!: () => void;
    const locked = new Promise<void>((resolve) => (rescheduled = resolve));
    const reschedule = database.db.transaction(async (trx) => {
      await scheduleJob(trx, { organizationId, kind: 'test.batch', subjectId: subjects[1], runAt: due });
      rescheduled();
      await held;
    });
    await locked;
    // When the run finishes, while that transaction still holds the row: it does not wait for it.
    await finishClaimedJobs(database.db, claim.token, 'done');
    commit();
    await reschedule;
    // Then the two others are gone and the rescheduled one is due again, unclaimed.
    const left = (await listJobs(database.db, organizationId)).map((job) => job.subjectId);
    expect(left).toEqual([subjects[1]]);
    expect((await database.db('jobs').where({ kind: 'test.batch', subject_id: subjects[1] }).first()).locked_by).toBeNull();
    // Leave nothing due for the tests that run every due job.
    await database.db('jobs').where({ organization_id: organizationId }).delete();
  });

  it('runs due jobs in time order on each organization’s clock and leaves future ones', async () => {
    const organizationId = await newOrganization();
    const clock = fixedClock(START);
    const seen: string[] = [];
    const handlers: JobHandlers = { 'test.record': async (_ctx, job) => void seen.push(job.subjectId) };
    await scheduleJob(database.db, { organizationId, kind: 'test.record', subjectId: `${organizationId}-b`, runAt: new Date(START.getTime() - 1000) });
    await scheduleJob(database.db, { organizationId, kind: 'test.record', subjectId: `${organizationId}-a`, runAt: new Date(START.getTime() - 2000) });
    await scheduleJob(database.db, { organizationId, kind: 'test.record', subjectId: `${organizationId}-later`, runAt: new Date(START.getTime() + 60_000) });
    expect(await runDueJobs({ db: database.db, clock, payments: unusedPayments, baseUrl: 'http://till.test', handlers })).toBe(2);
    expect(seen).toEqual([`${organizationId}-a`, `${organizationId}-b`]);
    expect((await listJobs(database.db, organizationId)).map((job) => job.subjectId)).toEqual([`${organizationId}-later`]);
  });

  it('replaces a pending job of the same kind and subject when it is scheduled again', async () => {
    const organizationId = await newOrganization();
    await scheduleJob(database.db, { organizationId, kind: 'test.once', subjectId: organizationId, runAt: new Date('2030-01-01T00:00:00Z') });
    await scheduleJob(database.db, { organizationId, kind: 'test.once', subjectId: organizationId, runAt: new Date('2031-01-01T00:00:00Z') });
    const jobs = await listJobs(database.db, organizationId);
    expect(jobs).toHaveLength(1);
    expect(jobs[0].runAt.toISOString()).toBe('2031-01-01T00:00:00.000Z');
  });

  it('keeps a job whose handler throws, counts the attempt and retries it later', async () => {
    const organizationId = await newOrganization();
    const clock = fixedClock(START);
    let calls = 0;
    const handlers: JobHandlers = {
      'test.flaky': async () => {
        calls++;
        if (calls === 1) throw new Error('processor unreachable');
      },
    };
    await scheduleJob(database.db, { organizationId, kind: 'test.flaky', subjectId: organizationId, runAt: START });
    await runDueJobs({ db: database.db, clock, payments: unusedPayments, baseUrl: 'http://till.test', handlers });
    const pending = await findJob(database.db, 'test.flaky', organizationId);
    expect(pending).toMatchObject({ attempts: 1 });
    expect(pending!.runAt.getTime()).toBeGreaterThan(START.getTime());
    expect(await database.db('jobs').where({ subject_id: organizationId }).first()).toMatchObject({ last_error: 'processor unreachable' });
    clock.advance(60 * 60 * 1000);
    await runDueJobs({ db: database.db, clock, payments: unusedPayments, baseUrl: 'http://till.test', handlers });
    expect(calls).toBe(2);
    expect(await findJob(database.db, 'test.flaky', organizationId)).toBeUndefined();
  });

  it('lets a handler schedule its own next occurrence without the runner deleting it', async () => {
    const organizationId = await newOrganization();
    const clock = fixedClock(START);
    const handlers: JobHandlers = {
      'test.repeat': async (ctx, job) => scheduleJob(ctx.db, { organizationId, kind: job.kind, subjectId: job.subjectId, runAt: addInterval(job.runAt, 'day', 1) }),
    };
    await scheduleJob(database.db, { organizationId, kind: 'test.repeat', subjectId: organizationId, runAt: START });
    expect(await runDueJobs({ db: database.db, clock, payments: unusedPayments, baseUrl: 'http://till.test', handlers })).toBe(1);
    expect((await findJob(database.db, 'test.repeat', organizationId))?.runAt.toISOString()).toBe('2026-02-01T12:00:00.000Z');
  });

  it('gives each due job to exactly one of several runners sharing the database', async () => {
    const organizationId = await newOrganization();
    for (let i = 0; i < 40; i++) {
      await scheduleJob(database.db, { organizationId, kind: 'test.count', subjectId: `${organizationId}-${i}`, runAt: new Date(START.getTime() - i) });
    }
    // Three runners in worker threads, each with its own connection, as separate daemons would hold.
    const ran = (await race(database.config, 'runJobs', Array.from({ length: 3 }, () => ({ now: START.toISOString() })))).flat();
    expect(ran).toHaveLength(40);
    expect(new Set(ran).size).toBe(40);
  });
});

describe('job claims', () => {
  it('lets another worker take over a job whose worker died once the lease lapses, or at once after releaseAllJobClaims', async () => {
    const organizationId = await newOrganization();
    const subjectId = `${organizationId}-orphan`;
    await scheduleJob(database.db, { organizationId, kind: 'test.orphan', subjectId, runAt: new Date(START.getTime() - 1000) });
    const mine = (claimed: Awaited<ReturnType<typeof claimDueJob>>) => claimed?.job.subjectId === subjectId;
    // A worker claims it and dies (never runs it, never releases it).
    expect(mine(await claimDueJob(database.db, START.getTime(), { organizationId }))).toBe(true);
    expect(await claimDueJob(database.db, START.getTime() + JOB_LEASE_MS - 1, { organizationId })).toBeUndefined();
    expect(mine(await claimDueJob(database.db, START.getTime() + JOB_LEASE_MS + 1, { organizationId }))).toBe(true);
    // A SQLite daemon starting up frees what its killed predecessor held.
    expect(await releaseAllJobClaims(database.db)).toBeGreaterThanOrEqual(1);
    expect(mine(await claimDueJob(database.db, START.getTime() + JOB_LEASE_MS + 2, { organizationId }))).toBe(true);
  });

  it('renews the claim of a job while its handler is still working', { timeout: 60_000 }, async () => {
    const organizationId = await newOrganization();
    const subjectId = `${organizationId}-slow`;
    await scheduleJob(database.db, { organizationId, kind: 'test.slow', subjectId, runAt: new Date(START.getTime() - 1000) });
    const claimed = (await claimDueJob(database.db, START.getTime(), { organizationId }))!;
    const leaseOf = async () => Number((await database.db('jobs').where({ kind: 'test.slow', subject_id: subjectId }).first()).locked_until_ms);
    const first = await leaseOf();
    // The handler returns only once it sees its claim pushed further out.
    const handlers: JobHandlers = {
      'test.slow': async () => {
        while ((await leaseOf()) <= first) await new Promise((resolve) => setTimeout(resolve, 100));
      },
    };
    expect(await runClaimedJob({ db: database.db, payments: unusedPayments, baseUrl: 'http://till.test', handlers }, claimed, fixedClock(START))).toBe('done');
    expect(await findJob(database.db, 'test.slow', subjectId)).toBeUndefined();
  });
});

describe('test clocks', () => {
  it('refuses to advance an organization that is not a sandbox, and to move backwards', async () => {
    const organizationId = await newOrganization();
    const clock = fixedClock(START);
    const deps = { db: database.db, clock, payments: unusedPayments, baseUrl: 'http://till.test', handlers: {} };
    await expect(advanceOrganizationClock(deps, organizationId, new Date('2027-01-01T00:00:00Z'))).rejects.toMatchObject({ code: 'NOT_SANDBOX' });
    await setSandbox(database.db, clock, organizationId, true);
    await expect(advanceOrganizationClock(deps, organizationId, new Date('2025-01-01T00:00:00Z'))).rejects.toMatchObject({ code: 'CLOCK_BACKWARDS' });
  });

  it('runs a year of monthly work in order, each job seeing the time it was due, and ends at the target', async () => {
    const organizationId = await newOrganization();
    const other = await newOrganization();
    const clock = fixedClock(START);
    await setSandbox(database.db, clock, organizationId, true);
    const seenAt: string[] = [];
    const handlers: JobHandlers = {
      'test.monthly': async (ctx, job) => {
        seenAt.push(ctx.clock.now().toISOString());
        await scheduleJob(ctx.db, { organizationId: job.organizationId, kind: job.kind, subjectId: job.subjectId, runAt: addInterval(START, 'month', seenAt.length + 1) });
      },
    };
    await scheduleJob(database.db, { organizationId, kind: 'test.monthly', subjectId: organizationId, runAt: addInterval(START, 'month', 1) });
    // Another organization's due work is not run by this organization's advance.
    await scheduleJob(database.db, { organizationId: other, kind: 'test.monthly', subjectId: other, runAt: addInterval(START, 'month', 1) });

    const result = await advanceOrganizationClock({ db: database.db, clock, payments: unusedPayments, baseUrl: 'http://till.test', handlers }, organizationId, addInterval(START, 'year', 1));
    expect(result).toMatchObject({ jobsRun: 12, jobsFailed: 0 });
    expect(seenAt).toEqual(Array.from({ length: 12 }, (_, i) => addInterval(START, 'month', i + 1).toISOString()));
    expect(result.to.toISOString()).toBe('2027-01-31T12:00:00.000Z');
    expect((await organizationClock(database.db, clock, organizationId)).now().toISOString()).toBe('2027-01-31T12:00:00.000Z');
    expect((await organizationClock(database.db, clock, other)).now().toISOString()).toBe(START.toISOString());
    expect(await findJob(database.db, 'test.monthly', other)).toBeDefined();
    expect((await findJob(database.db, 'test.monthly', organizationId))?.runAt.toISOString()).toBe('2027-02-28T12:00:00.000Z');

    // The daemon's runner treats the advanced organization's work as due on its clock, not on real time.
    await scheduleJob(database.db, { organizationId, kind: 'test.monthly', subjectId: organizationId, runAt: new Date('2027-01-31T11:00:00Z') });
    await runDueJobs({ db: database.db, clock, payments: unusedPayments, baseUrl: 'http://till.test', handlers: { 'test.monthly': async () => {} } });
    expect(await findJob(database.db, 'test.monthly', organizationId)).toBeUndefined();
    expect(await findJob(database.db, 'test.monthly', other)).toBeDefined();
  });

  it('does not retry a failing job over and over within one advance', async () => {
    const organizationId = await newOrganization();
    const clock = fixedClock(START);
    await setSandbox(database.db, clock, organizationId, true);
    let calls = 0;
    const handlers: JobHandlers = {
      'test.broken': async () => {
        calls++;
        throw new Error('broken');
      },
    };
    await scheduleJob(database.db, { organizationId, kind: 'test.broken', subjectId: organizationId, runAt: addInterval(START, 'day', 1) });
    const result = await advanceOrganizationClock({ db: database.db, clock, payments: unusedPayments, baseUrl: 'http://till.test', handlers }, organizationId, addInterval(START, 'month', 1));
    expect(result).toMatchObject({ jobsRun: 1, jobsFailed: 1 });
    expect(calls).toBe(1);
  });

  it('waits for a due job another worker is running, and runs what that job schedules, before it answers', async () => {
    const organizationId = await newOrganization();
    const clock = fixedClock(START);
    await setSandbox(database.db, clock, organizationId, true);
    const done: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handlers: JobHandlers = {
      'test.mail': async (ctx, job) => {
        await gate;
        done.push('mail');
        await scheduleJob(ctx.db, { organizationId: job.organizationId, kind: 'test.follow_up', subjectId: job.subjectId, runAt: addInterval(START, 'day', 2) });
      },
      'test.follow_up': async () => void done.push('follow up'),
    };
    await scheduleJob(database.db, { organizationId, kind: 'test.mail', subjectId: organizationId, runAt: addInterval(START, 'day', 1) });
    // The daemon's runner took the job as it came due and is still running it.
    const held = await claimDueJob(database.db, START.getTime(), { organizationId, dueByMs: addInterval(START, 'day', 1).getTime() });
    const elsewhere = runClaimedJob({ db: database.db, payments: unusedPayments, baseUrl: 'http://till.test', handlers }, held!, clock);
    // The other worker finishes once the advance has found the job held (and so could have answered without it).
    const heldCheck = (query: { sql: string }) => /locked_until_ms[`"]? >= /.test(query.sql) && release();
    database.db.on('query', heldCheck);
    try {
      const result = await advanceOrganizationClock({ db: database.db, clock, payments: unusedPayments, baseUrl: 'http://till.test', handlers }, organizationId, addInterval(START, 'week', 1));
      expect(done).toEqual(['mail', 'follow up']);
      expect(result).toMatchObject({ jobsRun: 1, jobsFailed: 0 });
    } finally {
      database.db.removeListener('query', heldCheck);
      release();
      await elsewhere;
    }
  });

  it('keeps an advanced organization a sandbox', async () => {
    const organizationId = await newOrganization();
    const clock = fixedClock(START);
    await setSandbox(database.db, clock, organizationId, true);
    await advanceOrganizationClock({ db: database.db, clock, payments: unusedPayments, baseUrl: 'http://till.test', handlers: {} }, organizationId, addInterval(START, 'day', 3));
    await expect(setSandbox(database.db, clock, organizationId, false)).rejects.toMatchObject({ code: 'CLOCK_ADVANCED' });
    expect(await clockState(database.db, organizationId)).toMatchObject({ sandbox: true, offsetMs: 3 * 86_400_000 });
  });
});
