import type { JobHandlers } from '../../jobs/jobs.js';
import { PAY_LINK_MAIL_JOB } from './job-kinds.js';
import { mailPayLink } from './mail.js';

/** The pay-link mail, sent after a declined renewal or dunning try (subject: that try). */
export const payLinkJobs: JobHandlers = {
  [PAY_LINK_MAIL_JOB]: async (context, job) => {
    await mailPayLink(context, job.subjectId);
  },
};
