import { z } from 'zod';
import { Timestamp } from '../../core/billing/shared/time.js';
import { getOrganization } from '../../core/billing/organizations/service.js';
import { advanceOrganizationClock, oneAdvanceAtATime, setSandbox } from '../../core/jobs/advance.js';
import { clockState } from '../../core/jobs/clock.js';
import { JOB_HANDLERS } from '../../core/jobs/handlers.js';
import { listJobs } from '../../core/jobs/jobs.js';
import { applyClockStep } from '../../core/jobs/step.js';
import { CoreError } from '../../core/errors.js';
import type { Executor } from '../../core/db/database.js';
import type { Clock } from '../../core/clock.js';
import type { V1Deps } from '../http/v1/deps.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['organizations:read', 'organizations:write'] as const;
const WRITE = ['organizations:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });

/** The answer of every clock operation (the OpenAPI document's, and the type describeClock writes). */
const ClockAnswer = z.object({
  organization_id: z.string(),
  sandbox: z.boolean().describe('Only a sandbox organization’s clock can be advanced'),
  now: z.iso.datetime({ offset: true }).describe('The organization’s current time'),
  offset_seconds: z.int().min(0).describe('How far its clock is ahead of real time'),
  pending_jobs: z.array(z.object({ kind: z.string(), subject_id: z.string(), run_at: z.iso.datetime({ offset: true }), attempts: z.int().min(0) })).describe('The next 100 jobs due'),
  pending_jobs_count: z.int().min(0),
});
const AdvanceAnswer = ClockAnswer.extend({
  advanced_from: z.iso.datetime({ offset: true }).describe('Where this advance started: where the previous one ended'),
  jobs_run: z.int().min(0),
  jobs_failed: z.int().min(0),
});

/** The organization's clock as the API shows it, with the jobs it will run next. */
async function describeClock(db: Executor, base: Clock, organizationId: string): Promise<z.input<typeof ClockAnswer>> {
  const state = await clockState(db, organizationId);
  const jobs = await listJobs(db, organizationId);
  return {
    organization_id: organizationId,
    sandbox: state.sandbox,
    now: new Date(base.now().getTime() + state.offsetMs).toISOString(),
    offset_seconds: Math.round(state.offsetMs / 1000),
    pending_jobs: jobs.slice(0, 100).map((job) => ({ kind: job.kind, subject_id: job.subjectId, run_at: job.runAt.toISOString(), attempts: job.attempts })),
    pending_jobs_count: jobs.length,
  };
}

const paymentsOf = (deps: V1Deps) => {
  if (!deps.payments) throw new CoreError('conflict', 'NO_PAYMENT_PROCESSOR', 'No payment processor is configured');
  return deps.payments;
};

/**
 * The test clock (a Till extension of Polar's API): a sandbox organization's clock can be moved forward, running
 * every renewal, dunning retry, expiry and benefit cycle due on the way, in order.
 */
export const clockRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/organizations/:id/clock',
    operationId: 'organizations:clock:get',
    summary: 'Get an organization’s clock: its current time, whether it is a sandbox, and the jobs due next',
    tag: 'organizations',
    scopes: READ,
    params: IdParams,
    response: ClockAnswer,
    handler: async ({ principal, params, deps }) => {
      const organization = await getOrganization(deps.db, organizationsWith(principal, READ), params.id);
      return describeClock(deps.db, deps.clock, organization.id);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/organizations/:id/clock',
    operationId: 'organizations:clock:update',
    summary: 'Mark an organization as sandbox (its clock can then be advanced) or not',
    tag: 'organizations',
    scopes: WRITE,
    params: IdParams,
    body: z.object({ sandbox: z.boolean() }).strict(),
    response: ClockAnswer,
    handler: async ({ principal, params, body, deps }) => {
      const organization = await getOrganization(deps.db, organizationsWith(principal, WRITE), params.id);
      await setSandbox(deps.db, deps.clock, organization.id, body.sandbox);
      return describeClock(deps.db, deps.clock, organization.id);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/organizations/:id/clock/advance',
    operationId: 'organizations:clock:advance',
    summary: 'Advance a sandbox organization’s clock (`to` a time or `by` a step such as +1month), running what falls due',
    tag: 'organizations',
    scopes: WRITE,
    params: IdParams,
    body: z
      .object({
        to: Timestamp.optional(),
        by: z.string().max(32).optional().describe('A step: +30s, +15m, +12h, +3d, +2w, +1month, +1year'),
      })
      .strict()
      .refine((body) => (body.to === undefined) !== (body.by === undefined), { message: 'Give exactly one of `to` and `by`', path: ['to'] }),
    response: AdvanceAnswer,
    handler: async ({ principal, params, body, deps }) => {
      const organization = await getOrganization(deps.db, organizationsWith(principal, WRITE), params.id);
      // One advance at a time per organization: each steps from where the previous left the clock, and is told
      // where its own step ended before the next one starts.
      return oneAdvanceAtATime(organization.id, () => advance(deps, organization.id, body));
    },
  }),
];

/** One advance of an organization's clock, from where it stands now, and the clock as that step left it. */
async function advance(deps: V1Deps, organizationId: string, body: { to?: Date; by?: string }): Promise<z.input<typeof AdvanceAnswer>> {
  const state = await clockState(deps.db, organizationId);
  const now = new Date(deps.clock.now().getTime() + state.offsetMs);
  const target = body.to ?? applyClockStep(now, body.by ?? '');
  // Dates past the year 9999 cannot be written back as ISO 8601 (nor stored on PostgreSQL).
  if (!target || Number.isNaN(target.getTime()) || target.getUTCFullYear() > 9999) {
    throw new CoreError('invalid', 'INVALID_CLOCK_STEP', 'Invalid clock step', [
      { loc: ['body', 'by'], msg: 'Use a step like +30s, +15m, +12h, +3d, +2w, +1month or +1year', type: 'value_error' },
    ]);
  }
  const result = await advanceOrganizationClock({ db: deps.db, clock: deps.clock, payments: paymentsOf(deps), baseUrl: deps.baseUrl, mailer: deps.mailer, handlers: JOB_HANDLERS }, organizationId, target);
  return {
    ...(await describeClock(deps.db, deps.clock, organizationId)),
    // Where this step started: the clock its target was computed from (the clock read again inside the advance is
    // a few milliseconds later, which made a step of a 28-day month look a millisecond short of it).
    advanced_from: now.toISOString(),
    jobs_run: result.jobsRun,
    jobs_failed: result.jobsFailed,
  };
}
