import type { JobHandlers } from '../../jobs/jobs.js';
import { findCheckoutById, transitionCheckout } from './repository.js';
import { CHECKOUT_EXPIRY_JOB } from './job-kinds.js';
import { announceCheckout } from './service.js';
import { viewOf } from './view.js';

/**
 * Expires an open checkout once its time is up on the organization's clock. Idempotent: a checkout already paid,
 * expired, or being confirmed right now is left alone (a confirmation that then fails puts it back to open, and
 * the next change to it finds it past expires_at). As Polar, the expiry is announced as checkout.expired alone.
 */
export const checkoutJobs: JobHandlers = {
  [CHECKOUT_EXPIRY_JOB]: async (context, job) => {
    const { db, clock, baseUrl } = context;
    await db.transaction(async (trx) => {
      const checkout = await findCheckoutById(trx, job.subjectId);
      const now = clock.now();
      if (!checkout || checkout.status !== 'open' || now < checkout.expiresAt) return;
      if (!(await transitionCheckout(trx, checkout.id, 'open', 'expired', { modifiedAt: now }))) return;
      const view = await viewOf(trx, { ...checkout, status: 'expired', modifiedAt: now }, now);
      await announceCheckout(trx, clock, baseUrl, view, 'checkout.expired');
    });
  },
};
