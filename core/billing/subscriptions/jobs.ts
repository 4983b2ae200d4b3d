import type { JobHandlers } from '../../jobs/jobs.js';
import { chargeSubscription } from './charge.js';
import { CHARGE_JOB, RENEW_JOB } from './job-kinds.js';
import { renewSubscription } from './renewal.js';

/**
 * Subscription work driven by the organization's clock: the renewal at each period end (which also ends a
 * trial and carries out a cancellation at period end), and the charge of what is owed with its dunning retries.
 */
export const subscriptionJobs: JobHandlers = {
  [RENEW_JOB]: async (context, job) => {
    // The charge follows the renewal at once; its job stays scheduled in case this worker dies in between.
    if (await renewSubscription(context, job.subjectId)) await chargeSubscription(context, job.subjectId);
  },
  [CHARGE_JOB]: async (context, job) => {
    await chargeSubscription(context, job.subjectId);
  },
};
