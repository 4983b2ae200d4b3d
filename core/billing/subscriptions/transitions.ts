import type { SubscriptionStatus } from './schema.js';

/**
 * Every status change a subscription may make. A change not listed here is a bug or a refused request; the
 * repository applies each one as `UPDATE … WHERE id = ? AND status = <from>`, so two concurrent changes of one
 * subscription cannot both win.
 *
 * - incomplete → active: its first payment went through; → incomplete_expired: it never did.
 * - trialing → active: the first charge at the trial's end succeeded; → past_due: it failed.
 * - active → past_due: a renewal charge failed.
 * - past_due → active: a dunning retry succeeded; → unpaid: reserved for processors that leave a subscription
 *   unpaid; Till's dunning ends in canceled (benefits revoked), as Polar's does.
 * - trialing, active, past_due, unpaid → canceled: canceled at period end, revoked now, or dunning exhausted.
 */
export const SUBSCRIPTION_TRANSITIONS: Readonly<Record<SubscriptionStatus, readonly SubscriptionStatus[]>> = {
  incomplete: ['active', 'trialing', 'incomplete_expired'],
  incomplete_expired: [],
  trialing: ['active', 'past_due', 'canceled'],
  active: ['past_due', 'canceled'],
  past_due: ['active', 'unpaid', 'canceled'],
  unpaid: ['active', 'canceled'],
  canceled: [],
};

export const canTransition = (from: SubscriptionStatus, to: SubscriptionStatus): boolean =>
  from === to || SUBSCRIPTION_TRANSITIONS[from].includes(to);

/** A subscription that has ended for good: no renewals, no changes. */
export const isTerminal = (status: SubscriptionStatus): boolean => SUBSCRIPTION_TRANSITIONS[status].length === 0;
