import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { scheduleJob, wakeJobRunnerOnCommit, type JobHandlers } from '../../jobs/jobs.js';
import { linksOf } from '../products/repository.js';
import { grantsOfScope, holdersOfProduct } from './repository.js';
import { scopeOf } from './schema.js';
import { grantBenefits, revokeGrants } from './service.js';
import { stateOf } from './state.js';

/** A product's benefits changed: bring the grants of everyone holding it in line (Polar's update_product_benefits_grants). */
export const PRODUCT_GRANTS_JOB = 'product.update_benefit_grants';

/** Schedules the grant update of a product's holders, due now, in the transaction that changed its benefits. */
export async function scheduleProductGrants(trx: Knex.Transaction, organizationId: string, productId: string, now: Date): Promise<void> {
  await scheduleJob(trx, { organizationId, kind: PRODUCT_GRANTS_JOB, subjectId: productId, runAt: now });
  wakeJobRunnerOnCommit(trx, now.getTime());
}

type Holding = { organizationId: string; customerId: string; productId: string; subscriptionId: string | null; orderId: string | null; entitled: boolean };

/**
 * One subscription's or order's grants against the product's benefits as they are now: grants of benefits no longer
 * on the product are revoked (benefit_grant.revoked); when the holding still entitles its customer, the product's
 * benefits it has no grant in effect for are granted (benefit_grant.created, or .updated for a revoked one given back).
 * Grants that are pending or failed are left to their own retry. Idempotent: a second run changes nothing.
 */
async function alignHolding(trx: Knex.Transaction, clock: Clock, holding: Holding): Promise<void> {
  const benefitIds = (await linksOf(trx, [holding.productId])).get(holding.productId)?.benefitIds ?? [];
  const grants = await grantsOfScope(trx, holding.customerId, scopeOf(holding));
  await revokeGrants(trx, clock, grants.filter((grant) => !benefitIds.includes(grant.benefitId) && stateOf(grant) !== 'revoked'));
  if (!holding.entitled) return;
  const inEffect = new Set(grants.filter((grant) => stateOf(grant) !== 'revoked').map((grant) => grant.benefitId));
  const missing = benefitIds.filter((id) => !inEffect.has(id));
  if (missing.length) await grantBenefits(trx, clock, { ...holding, only: missing });
}

/**
 * Active and trialing subscriptions are granted the product's new benefits, as Polar grants them (its `active`
 * statuses); past due ones get nothing new (during their grace period they keep what they had) but lose removed
 * benefits, as do ended ones. Paid one-time orders are granted unless a refund or a resolved dispute took their benefits back.
 * Each holding runs in its own transaction, so one customer's failure does not hold the others back (the job runs
 * again and finds the done ones aligned).
 */
export const productGrantJobs: JobHandlers = {
  [PRODUCT_GRANTS_JOB]: async (context, job) => {
    const { db, clock } = context;
    const holders = await holdersOfProduct(db, job.subjectId);
    const base = { organizationId: job.organizationId, productId: job.subjectId };
    let failure: unknown;
    const run = async (holding: Holding) => {
      try {
        await db.transaction((trx) => alignHolding(trx, clock, holding));
      } catch (error) {
        failure ??= error;
      }
    };
    for (const s of holders.subscriptions) {
      await run({ ...base, customerId: s.customerId, subscriptionId: s.id, orderId: null, entitled: s.status === 'active' || s.status === 'trialing' });
    }
    for (const o of holders.orders) {
      await run({ ...base, customerId: o.customerId, subscriptionId: null, orderId: o.id, entitled: !o.benefitsTakenBack });
    }
    if (failure) throw failure;
  },
};
