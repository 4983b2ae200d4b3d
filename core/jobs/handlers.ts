import type { JobHandlers } from './jobs.js';
import { subscriptionJobs } from '../billing/subscriptions/jobs.js';
import { pastDueJobs } from '../billing/subscriptions/past-due-access.js';
import { meteringJobs } from '../metering/customer-meters.js';
import { rollupJobs } from '../metering/rollups.js';
import { checkoutJobs } from '../billing/checkouts/jobs.js';
import { refundJobs } from '../billing/refunds/service.js';
import { paymentJobs } from '../billing/payments/settle.js';
import { payLinkJobs } from '../billing/pay-links/jobs.js';
import { benefitGrantJobs } from '../billing/benefit-grants/sync.js';
import { productGrantJobs } from '../billing/benefit-grants/product-benefits.js';

/**
 * Every kind of time-driven job Till runs, by kind. Each domain exports its handlers (a record keyed by kind,
 * named `<domain>Jobs`) and adds them here; the daemon's runner and test-clock advances use this one table.
 */
export const JOB_HANDLERS: JobHandlers = {
  ...subscriptionJobs,
  ...pastDueJobs,
  ...meteringJobs,
  ...rollupJobs,
  ...checkoutJobs,
  ...refundJobs,
  ...paymentJobs,
  ...payLinkJobs,
  ...benefitGrantJobs,
  ...productGrantJobs,
};
