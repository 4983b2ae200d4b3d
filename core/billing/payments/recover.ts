import { fromDbTime } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { scheduleJob } from '../../jobs/jobs.js';
import { REFUND_SETTLE_JOB } from '../refunds/service.js';
import { PAYMENT_SETTLE_JOB } from './intents.js';

/**
 * Makes the settle jobs of every answer a killed run was still waiting for due at once: intents still `created`
 * (the processor may have charged; its answer never came) and refunds still pending without the processor's id.
 * Only for a daemon that owns its database (SQLite): at its start no request of its own can be waiting for those
 * answers, so there is nothing to wait for, and the checkout, renewal or refund is settled as soon as the daemon is
 * back instead of a minute (five for a refund) after it was claimed. Daemons sharing PostgreSQL keep the delay,
 * since another one may still be waiting for the answer. Answers how many jobs were brought forward.
 */
export async function settleLeftoversNow(db: Database): Promise<number> {
  let count = 0;
  const payments = await db('payments').where({ status: 'created' }).select('id', 'organization_id', 'created_at');
  for (const row of payments) {
    // created_at is on the organization's clock, as job times are: already due.
    await scheduleJob(db, { organizationId: String(row.organization_id), kind: PAYMENT_SETTLE_JOB, subjectId: String(row.id), runAt: fromDbTime(row.created_at) });
    count++;
  }
  const refunds = await db('refunds').where({ status: 'pending' }).whereNull('processor_refund_id').select('id', 'organization_id', 'created_at');
  for (const row of refunds) {
    await scheduleJob(db, { organizationId: String(row.organization_id), kind: REFUND_SETTLE_JOB, subjectId: String(row.id), runAt: fromDbTime(row.created_at) });
    count++;
  }
  return count;
}
