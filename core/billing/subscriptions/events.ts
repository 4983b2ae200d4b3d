import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { recordEvent, type WebhookEventType } from '../../webhooks/outbox.js';
import { announceCustomerState } from '../benefit-grants/service.js';
import { viewsOf } from './relations.js';
import type { Subscription } from './schema.js';
import { serializeSubscription } from './serialize.js';

/** Polar's `subscription.active`: the statuses that give the customer access, a trial included. */
const givesAccess = (s: Subscription) => s.status === 'trialing' || s.status === 'active';

/**
 * The webhook events a change of a subscription makes, in Polar's order: subscription.created or .updated,
 * then what the change means — .active when it starts giving access (a trial counts, as in Polar: a trial's start
 * sends it, its end does not; a past-due subscription paid again sends it again), .canceled when it is set to end (or ends
 * without having been set to), .uncanceled when that is taken back, .past_due when a renewal's charge is declined,
 * .revoked when it ends for good.
 */
export function eventTypesOf(previous: Subscription | null, next: Subscription): WebhookEventType[] {
  if (previous === null) return givesAccess(next) ? ['subscription.created', 'subscription.active'] : ['subscription.created'];
  const types: WebhookEventType[] = ['subscription.updated'];
  if (givesAccess(next) && !givesAccess(previous)) types.push('subscription.active');
  const ended = next.status === 'canceled' && previous.status !== 'canceled';
  if ((next.cancelAtPeriodEnd && !previous.cancelAtPeriodEnd) || (ended && !previous.cancelAtPeriodEnd)) types.push('subscription.canceled');
  if (previous.cancelAtPeriodEnd && !next.cancelAtPeriodEnd && !ended) types.push('subscription.uncanceled');
  if (next.status === 'past_due' && previous.status !== 'past_due') types.push('subscription.past_due');
  if (ended) types.push('subscription.revoked');
  return types;
}

/** How a change was made, as Polar's subscription.updated system event tells it (a plan change's proration). */
export type ChangeDetail = { proration_behavior?: string };

/**
 * Records the events of a change in its transaction, each carrying the subscription exactly as the API answers
 * it, and tells the customer-state domain when what the customer is entitled to may have changed.
 */
export async function announceChange(trx: Knex.Transaction, clock: Clock, baseUrl: string, previous: Subscription | null, next: Subscription, detail?: ChangeDetail): Promise<void> {
  const [view] = await viewsOf(trx, [next]);
  const data = serializeSubscription(view, baseUrl);
  // What the lifecycle system events compare (a renewal, a change of product or discount), in wire names.
  const before = previous && { product_id: previous.productId, discount_id: previous.discountId, current_period_start: previous.currentPeriodStart.toISOString() };
  for (const type of eventTypesOf(previous, next)) await recordEvent(trx, clock, { organizationId: next.organizationId, type, data, previous: before, detail });
  const entitlementChanged =
    previous === null ||
    previous.status !== next.status ||
    previous.cancelAtPeriodEnd !== next.cancelAtPeriodEnd ||
    previous.productId !== next.productId ||
    previous.currentPeriodEnd.getTime() !== next.currentPeriodEnd.getTime();
  if (entitlementChanged) await announceCustomerState(trx, clock, next.organizationId, next.customerId);
}
