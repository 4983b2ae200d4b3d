import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { scheduleJob, type JobHandlers } from '../../jobs/jobs.js';
import { grantsOfScope } from '../benefit-grants/repository.js';
import { scopeOf } from '../benefit-grants/schema.js';
import { grantBenefits, revokeBenefits } from '../benefit-grants/service.js';
import { stateOf } from '../benefit-grants/state.js';
import { findOrganization } from '../organizations/repository.js';
import { findSubscription } from './repository.js';
import type { Subscription } from './schema.js';

/** A past due subscription's grace period ran out: revoke its benefits if it is still owed. */
export const PAST_DUE_REVOKE_JOB = 'subscription.past_due_revoke';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A subscription just went past due (its first declined charge), in that transaction. As Polar (mark_past_due, then
 * enqueue_benefits_grants with its revocation grace period): with the organization's
 * subscription_settings.benefit_revocation_grace_period at 0 days (the default) its benefits are revoked now;
 * otherwise at the end of that many days from past_due_at, if it is still past due then.
 */
export async function subscriptionWentPastDue(trx: Knex.Transaction, clock: Clock, s: Subscription, pastDueAt: Date): Promise<void> {
  const days = (await findOrganization(trx, s.organizationId))?.settings.subscription_settings.benefit_revocation_grace_period ?? 0;
  if (days === 0) {
    await revokeBenefits(trx, clock, { organizationId: s.organizationId, customerId: s.customerId, subscriptionId: s.id });
    return;
  }
  await scheduleJob(trx, { organizationId: s.organizationId, kind: PAST_DUE_REVOKE_JOB, subjectId: s.id, runAt: new Date(pastDueAt.getTime() + days * DAY_MS) });
}

/**
 * A past due subscription was paid and is active again: the benefits revoked while it was owed are granted again
 * (benefit_grant.updated), as Polar's mark_active grants them. Answers whether any was, so the caller does not also
 * cycle them (a re-grant already gives a period's meter credits). A grant revoked for another reason (its benefit
 * was taken off the product) stays revoked and counts for nothing: only a grant that goes from revoked to granted here
 * is a re-grant.
 */
export async function subscriptionRecovered(trx: Knex.Transaction, clock: Clock, s: Subscription): Promise<boolean> {
  const scope = scopeOf({ subscriptionId: s.id });
  const revoked = new Set((await grantsOfScope(trx, s.customerId, scope)).filter((grant) => stateOf(grant) === 'revoked').map((grant) => grant.id));
  if (revoked.size === 0) return false;
  await grantBenefits(trx, clock, { organizationId: s.organizationId, customerId: s.customerId, productId: s.productId, orderId: null, subscriptionId: s.id });
  return (await grantsOfScope(trx, s.customerId, scope)).some((grant) => revoked.has(grant.id) && stateOf(grant) === 'granted');
}

export const pastDueJobs: JobHandlers = {
  [PAST_DUE_REVOKE_JOB]: async (context, job) => {
    await context.db.transaction(async (trx) => {
      const s = await findSubscription(trx, job.subjectId, 'any', { forUpdate: true });
      if (!s || (s.status !== 'past_due' && s.status !== 'unpaid')) return;
      await revokeBenefits(trx, context.clock, { organizationId: s.organizationId, customerId: s.customerId, subscriptionId: s.id });
    });
  },
};
