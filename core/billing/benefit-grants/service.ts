import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import { CoreError } from '../../errors.js';
import { recordEvent } from '../../webhooks/outbox.js';
import { findBenefit, findBenefits } from '../benefits/repository.js';
import type { Benefit } from '../benefits/schema.js';
import { findCustomers } from '../customers/repository.js';
import type { Customer } from '../customers/schema.js';
import { announceCustomerState as announceState } from '../customer-state/service.js';
import { linksOf } from '../products/repository.js';
import { GrantDeferred, GrantFailure, strategyFor } from './providers/index.js';
import { claimGrant, grantsOfBenefit, grantsOfCustomer, grantsOfScope, saveGrantState } from './repository.js';
import { scopeOf, type BenefitGrant } from './schema.js';
import { serializeGrant } from './serialize.js';
import { canMove, failed, granted, revoked, stateOf } from './state.js';

type Trx = Knex.Transaction;
type GrantEvent = 'benefit_grant.created' | 'benefit_grant.updated' | 'benefit_grant.revoked' | 'benefit_grant.cycled';

async function customerOf(trx: Trx, grant: { organizationId: string; customerId: string }): Promise<Customer | undefined> {
  return (await findCustomers(trx, { id: grant.customerId }, [grant.organizationId]))[0];
}

/**
 * Records a benefit_grant.* event for the grant in the caller's transaction (outbox). `before` is the grant before
 * the change (null for a new one): whether it was already granted tells Polar's benefit.granted from benefit.updated.
 */
export async function emitGrantEvent(trx: Trx, clock: Clock, type: GrantEvent, grant: BenefitGrant, customer: Customer, benefit: Benefit, before: BenefitGrant | null) {
  const previous = before && { is_granted: stateOf(before) === 'granted' };
  await recordEvent(trx, clock, { organizationId: grant.organizationId, type, data: serializeGrant(grant, customer, benefit), previous });
}
const emit = emitGrantEvent;

type Attempt<T> = { ok: true; value: T } | { ok: false; deferred: false; error: { message: string; type: string; timestamp: string } } | { ok: false; deferred: true };

/**
 * Runs a strategy step; a GrantFailure becomes the grant's recorded error instead of failing the caller's change,
 * and a GrantDeferred (the grant's job calls the service later) leaves it pending without one.
 */
async function attempt<T>(step: () => Promise<T>, now: Date): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await step() };
  } catch (error) {
    if (error instanceof GrantDeferred) return { ok: false, deferred: true };
    if (error instanceof GrantFailure) return { ok: false, deferred: false, error: { message: error.message, type: error.type, timestamp: now.toISOString() } };
    throw error;
  }
}

/** The grant once its step ran: granted, waiting for its job (no longer revoked, no error), or failed with why. */
function afterGrantStep(grant: BenefitGrant, result: Attempt<BenefitGrant['properties']>, now: Date): BenefitGrant {
  if (result.ok) return granted(grant, result.value, now);
  if (result.deferred) return { ...grant, revokedAt: null, error: null, modifiedAt: now };
  return failed(grant, result.error, now);
}

/**
 * Grants a product's benefits to a customer for an order or subscription (idempotent per benefit, customer and
 * subscription-or-order): new grants emit benefit_grant.created, re-granted ones benefit_grant.updated, and the
 * customer's state is announced once when anything changed. A benefit that cannot be granted (a provider not
 * configured) leaves its grant with an `error` instead of failing the purchase. `clock` is the organization's
 * clock (organizationClock, or a job's ctx.clock): license key expiry and meter credits are dated by it.
 * `only` limits it to those of the product's benefits (a product's benefits changed: the new ones).
 */
export async function grantBenefits(
  trx: Trx,
  clock: Clock,
  input: { organizationId: string; customerId: string; productId: string; orderId: string | null; subscriptionId: string | null; only?: readonly string[] },
): Promise<void> {
  const linked = (await linksOf(trx, [input.productId])).get(input.productId)?.benefitIds ?? [];
  const benefitIds = input.only ? linked.filter((id) => input.only!.includes(id)) : linked;
  if (benefitIds.length === 0) return;
  const benefits = await findBenefits(trx, input.organizationId, benefitIds);
  const customer = await customerOf(trx, input);
  if (!customer) throw new CoreError('not_found', 'CUSTOMER_NOT_FOUND', 'Customer not found');
  const now = clock.now();
  const scope = scopeOf(input);
  let changed = false;
  for (const benefit of benefits) {
    const fresh: BenefitGrant = {
      id: newId(),
      organizationId: input.organizationId,
      customerId: input.customerId,
      benefitId: benefit.id,
      subscriptionId: input.subscriptionId,
      orderId: input.orderId,
      scope,
      grantedAt: null,
      revokedAt: null,
      properties: {},
      previousProperties: null,
      error: null,
      createdAt: now,
      modifiedAt: null,
    };
    const { grant, created } = await claimGrant(trx, fresh);
    if (stateOf(grant) === 'granted') continue;
    const result = await attempt(() => strategyFor(benefit).grant({ trx, now, benefit, grant }), now);
    const next = afterGrantStep(grant, result, now);
    if (!canMove(stateOf(grant), stateOf(next)) || !(await saveGrantState(trx, next, grant))) continue;
    await emit(trx, clock, created ? 'benefit_grant.created' : 'benefit_grant.updated', next, customer, benefit, created ? null : grant);
    changed = true;
  }
  if (changed) await announceState(trx, clock, input.organizationId, input.customerId);
}

/** Revokes each grant not yet revoked, with its event; then announces each affected customer's state once. */
export async function revokeGrants(trx: Trx, clock: Clock, grants: readonly BenefitGrant[]): Promise<void> {
  const now = clock.now();
  const customers = new Map<string, Customer | undefined>();
  const changed = new Set<string>();
  for (const grant of grants) {
    if (stateOf(grant) === 'revoked') continue;
    if (!customers.has(grant.customerId)) customers.set(grant.customerId, await customerOf(trx, grant));
    const customer = customers.get(grant.customerId);
    const benefit = await findBenefit(trx, grant.benefitId, [grant.organizationId]);
    // A grant that was never in effect has nothing to take back; a deleted benefit has no strategy left to run.
    const properties = benefit && stateOf(grant) === 'granted' ? await attempt(() => strategyFor(benefit).revoke({ trx, now, benefit, grant }), now) : { ok: true as const, value: grant.properties };
    const next = properties.ok ? revoked(grant, properties.value, now) : { ...revoked(grant, grant.properties, now), error: properties.deferred ? null : properties.error };
    if (!(await saveGrantState(trx, next, grant))) continue;
    if (benefit && customer) await emit(trx, clock, 'benefit_grant.revoked', next, customer, benefit, grant);
    if (customer) changed.add(`${grant.organizationId} ${grant.customerId}`);
  }
  for (const key of changed) {
    const [organizationId, customerId] = key.split(' ') as [string, string];
    await announceState(trx, clock, organizationId, customerId);
  }
}

/**
 * Revokes what one order or subscription granted a customer (refund with revoke_benefits, subscription revoked or
 * ended): each grant in effect is revoked (benefit_grant.revoked), one announcement of the customer's state.
 */
export async function revokeBenefits(trx: Trx, clock: Clock, input: { organizationId: string; customerId: string; orderId?: string; subscriptionId?: string }): Promise<void> {
  await revokeGrants(trx, clock, await grantsOfScope(trx, input.customerId, scopeOf(input)));
}

/**
 * Revokes everything granted to a customer (the customer is being deleted). Call it in the deletion's transaction
 * BEFORE the customer row is marked deleted, so the events can still carry the customer.
 */
export async function revokeCustomerBenefits(trx: Trx, clock: Clock, organizationId: string, customerId: string): Promise<void> {
  await revokeGrants(trx, clock, (await grantsOfCustomer(trx, customerId)).filter((grant) => grant.organizationId === organizationId));
}

/**
 * Revokes every grant of a benefit (the benefit is being deleted, as Polar does). Call it in the deletion's
 * transaction BEFORE the benefit row is marked deleted, so each grant's strategy (a license key, a meter credit) runs.
 */
export async function revokeBenefitGrants(trx: Trx, clock: Clock, benefitId: string): Promise<void> {
  await revokeGrants(trx, clock, await grantsOfBenefit(trx, benefitId));
}

/**
 * A subscription renewed: each of its grants in effect runs its type's cycle (meter credits are credited again)
 * and emits benefit_grant.cycled. Grants that failed earlier are tried again.
 */
export async function cycleBenefits(trx: Trx, clock: Clock, input: { organizationId: string; customerId: string; subscriptionId: string }): Promise<void> {
  const grants = await grantsOfScope(trx, input.customerId, scopeOf(input));
  const now = clock.now();
  const customer = await customerOf(trx, input);
  if (!customer) return;
  let changed = false;
  for (const grant of grants) {
    const state = stateOf(grant);
    if (state === 'revoked') continue;
    const benefit = await findBenefit(trx, grant.benefitId, [grant.organizationId]);
    if (!benefit) continue;
    if (state === 'pending') {
      const result = await attempt(() => strategyFor(benefit).grant({ trx, now, benefit, grant }), now);
      if (!result.ok) continue;
      const next = granted(grant, result.value, now);
      if (!(await saveGrantState(trx, next, grant))) continue;
      await emit(trx, clock, 'benefit_grant.updated', next, customer, benefit, grant);
      changed = true;
      continue;
    }
    const result = await attempt(() => strategyFor(benefit).cycle({ trx, now, benefit, grant }), now);
    if (!result.ok) continue;
    const next: BenefitGrant = { ...grant, previousProperties: grant.properties, properties: result.value, modifiedAt: now };
    if (!(await saveGrantState(trx, next, grant))) continue;
    await emit(trx, clock, 'benefit_grant.cycled', next, customer, benefit, grant);
    changed = true;
  }
  if (changed) await announceState(trx, clock, input.organizationId, input.customerId);
}

/**
 * A benefit changed (description, properties): each grant in effect is announced again with the benefit as it now
 * is (benefit_grant.updated), as Polar updates the grants of a benefit that changes. Call it in the update's
 * transaction with the organization's clock.
 */
export async function benefitUpdated(trx: Trx, clock: Clock, benefit: Benefit): Promise<void> {
  const now = clock.now();
  for (const grant of await grantsOfBenefit(trx, benefit.id)) {
    if (stateOf(grant) !== 'granted') continue;
    const customer = await customerOf(trx, grant);
    if (!customer) continue;
    const next: BenefitGrant = { ...grant, modifiedAt: now };
    if (!(await saveGrantState(trx, next, grant))) continue;
    await emit(trx, clock, 'benefit_grant.updated', next, customer, benefit, grant);
  }
}

/** Announces a customer's state (customer.state_changed with the CustomerState of GET /v1/customers/{id}/state). */
export const announceCustomerState = announceState;
