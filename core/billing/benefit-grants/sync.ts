import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { JobHandlers } from '../../jobs/jobs.js';
import { findBenefit, findBenefitEvenDeleted } from '../benefits/repository.js';
import { findCustomers } from '../customers/repository.js';
import { announceCustomerState } from '../customer-state/service.js';
import { connectedAccount } from '../oauth-accounts/connected.js';
import { PLATFORM_OF } from '../oauth-accounts/schema.js';
import { GRANT_SYNC_JOB, accountOf, isExternal, providerFor, scheduleGrantSync, targetOf, type ExternalBenefit } from './providers/external.js';
import { GrantFailure } from './providers/provider.js';
import { findGrantById, lockGrantById, saveGrantState } from './repository.js';
import type { BenefitGrant, GrantProperties } from './schema.js';
import { emitGrantEvent } from './service.js';
import { granted, stateOf } from './state.js';

/** What a grant keeps of the access it gave on the service: dropped once the service took it back. */
const GIVEN_KEYS = ['granted_account_id', 'granted_account_username', 'invitation_id'] as const;
const TARGET_KEYS = ['guild_id', 'role_id', 'repository_owner', 'repository_name', 'permission'] as const;

const withoutGiven = (properties: GrantProperties): GrantProperties =>
  Object.fromEntries(Object.entries(properties).filter(([key]) => !(GIVEN_KEYS as readonly string[]).includes(key)));

/** Saves `change` on the grant if nothing changed its state since it was read (the job runs again otherwise). */
async function saveIfUnchanged(db: Database, read: BenefitGrant, change: (current: BenefitGrant) => BenefitGrant): Promise<boolean> {
  return db.transaction(async (trx) => {
    const current = await lockGrantById(trx, read.id);
    if (!current || current.modifiedAt?.getTime() !== read.modifiedAt?.getTime()) return false;
    return saveGrantState(trx, change(current), current);
  });
}

/** Records why the service step failed on the grant (Polar's BenefitGrantError); no event for a retry's failure. */
async function recordFailure(db: Database, grant: BenefitGrant, failure: GrantFailure, now: Date): Promise<void> {
  const error = { message: failure.message, type: failure.type, timestamp: now.toISOString() };
  await saveIfUnchanged(db, grant, (current) => ({ ...current, error }));
}

/**
 * Takes back on the service what the grant gave (a revoked grant, or a grant moving to another account): the role
 * or the membership on Discord (kick_member), the invitation and the collaborator on GitHub. What the grant targeted
 * is read from its properties, so a benefit edited or deleted since still has its old access taken back.
 */
async function takeBack(db: Database, now: Date, grant: BenefitGrant, benefit: ExternalBenefit): Promise<BenefitGrant | undefined> {
  const target: Record<string, unknown> = Object.fromEntries(TARGET_KEYS.filter((key) => key in grant.properties).map((key) => [key, grant.properties[key]]));
  if (benefit.type === 'discord') target.kick_member = benefit.properties.kick_member;
  await providerFor(benefit.type).revokeAccess(target, grant.properties);
  const saved = await saveIfUnchanged(db, grant, (current) => ({ ...current, properties: withoutGiven(current.properties), error: null, modifiedAt: now }));
  if (!saved) return undefined;
  return { ...grant, properties: withoutGiven(grant.properties), error: null, modifiedAt: now };
}

/**
 * Gives the grant's account access on the service and marks the grant granted (benefit_grant.updated, the customer's
 * state announced). A grant revoked while the service was being called keeps what was given in its properties and
 * runs again, to take it back.
 */
async function give(db: Database, clock: Clock, grant: BenefitGrant, benefit: ExternalBenefit): Promise<void> {
  const now = clock.now();
  const provider = providerFor(benefit.type);
  const accountId = accountOf(grant, benefit.type);
  const account = await connectedAccount(db, now, grant.customerId, PLATFORM_OF[benefit.type], accountId);
  const target = targetOf(benefit);
  const kept = await provider.grantAccess(target, account);
  const given = { granted_account_id: account.id, granted_account_username: account.username, ...kept };
  await db.transaction(async (trx) => {
    const current = await lockGrantById(trx, grant.id);
    if (!current) return;
    if (stateOf(current) !== 'revoked' && current.properties.account_id === accountId) {
      const properties = { ...current.properties, ...target, ...given };
      const next = stateOf(current) === 'granted' ? { ...current, properties, previousProperties: current.properties, error: null, modifiedAt: now } : granted(current, properties, now);
      if (!(await saveGrantState(trx, next, current))) return;
      const customer = (await findCustomers(trx, { id: current.customerId }, [current.organizationId]))[0];
      if (!customer) return;
      await emitGrantEvent(trx, clock, 'benefit_grant.updated', next, customer, benefit, current);
      await announceCustomerState(trx, clock, current.organizationId, current.customerId);
      return;
    }
    // Revoked, or moved to another account, while the service was called: what it just gave, and where (takeBack
    // reads the target from the properties), is taken back next run.
    await saveGrantState(trx, { ...current, properties: { ...current.properties, ...target, ...given }, modifiedAt: now }, current);
    await scheduleGrantSync(trx, current, now);
  });
}

/**
 * benefit_grant.sync: brings the service in line with the grant. A revoked grant that gave access has it taken back
 * (retried until the service confirms: a revoked grant never leaves access); a grant whose account changed has the
 * old account's access taken back first; a pending grant is given access. A failure is recorded on the grant, and a
 * retriable one (the service down, rate limiting, a refusal the seller can fix) throws, so the job runs again later
 * with the runner's backoff (30 s doubling, at most an hour).
 */
export async function syncGrant(db: Database, clock: Clock, grantId: string): Promise<void> {
  const read = await findGrantById(db, grantId);
  if (!read) return;
  let grant: BenefitGrant = read;
  const benefit = await findBenefitEvenDeleted(db, grant.benefitId);
  if (!benefit || !isExternal(benefit)) return;
  const now = clock.now();
  try {
    const given = grant.properties.granted_account_id;
    const state = stateOf(grant);
    if (state === 'revoked') {
      if (typeof given === 'string') await takeBack(db, now, grant, benefit);
      return;
    }
    if (typeof given === 'string' && given !== grant.properties.account_id) {
      const after = await takeBack(db, now, grant, benefit);
      if (!after) return scheduleGrantSync(db, { id: grantId, organizationId: benefit.organizationId }, now);
      grant = after;
    }
    if (stateOf(grant) === 'granted' && grant.properties.granted_account_id === grant.properties.account_id) return;
    // A benefit deleted since is no longer given.
    if (!(await findBenefit(db, benefit.id, [benefit.organizationId]))) return;
    await give(db, clock, grant, benefit);
  } catch (error) {
    if (!(error instanceof GrantFailure)) throw error;
    await recordFailure(db, grant, error, now);
    if (error.retriable || stateOf(grant) === 'revoked') throw error;
  }
}

export const benefitGrantJobs: JobHandlers = {
  [GRANT_SYNC_JOB]: (context, job) => syncGrant(context.db, context.clock, job.subjectId),
};
