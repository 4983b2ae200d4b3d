import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import type { PaymentProcessor } from '../../payments/processor.js';
import { claimRedemption, findDiscount } from '../discounts/repository.js';
import { fixedAmountIn } from '../discounts/schema.js';
import { findOrganization } from '../organizations/repository.js';
import { viewsOf, type SubscriptionView } from './relations.js';
import { commit, endSubscription } from './renewal.js';
import { changeProduct } from './change-product.js';
import { findSubscription } from './repository.js';
import type { Subscription, SubscriptionRevoke, SubscriptionUpdate } from './schema.js';
import { subscriptionNotFound } from './service.js';
import { isTerminal } from './transitions.js';

/** What the subscription use cases need. `clock` is the daemon's; each organization's is derived from it. */
export interface SubscriptionDeps {
  db: Database;
  clock: Clock;
  payments: PaymentProcessor;
  /** Stripe when configured: the processor of organizations not marked sandbox (core/payments/select.ts). */
  livePayments?: PaymentProcessor | null;
  baseUrl: string;
}

export interface Access {
  read: ReadonlySet<string>;
  write: ReadonlySet<string>;
}

type Issue = { loc: (string | number)[]; msg: string; type: string };
export const invalid = (issues: Issue[]) => new CoreError('invalid', 'INVALID_SUBSCRIPTION_UPDATE', issues[0]?.msg ?? 'Invalid subscription update', issues);
export const issue = (path: string, msg: string): Issue => ({ loc: ['body', path], msg, type: 'value_error' });
export const alreadyCanceled = () => new CoreError('forbidden', 'SUBSCRIPTION_ALREADY_CANCELED', 'This subscription is already canceled or will be at the end of the period.');
export const locked = (why: string) => new CoreError('conflict', 'SUBSCRIPTION_LOCKED', why);

/** A subscription the caller may change, locked for the transaction, with its organization's clock. */
async function writable(trx: Parameters<typeof findSubscription>[0], deps: SubscriptionDeps, access: Access, id: string) {
  const s = await findSubscription(trx, id, access.read, { forUpdate: true });
  if (!s) throw subscriptionNotFound();
  if (!access.write.has(s.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this subscription but not change it');
  return { s, clock: await organizationClock(trx, deps.clock, s.organizationId) };
}

/** Applies a change computed from the locked row and answers the subscription as it now is. */
async function change(deps: SubscriptionDeps, access: Access, id: string, apply: (s: Subscription, now: Date, clock: Clock, trx: Parameters<Parameters<Database['transaction']>[0]>[0]) => Promise<Subscription | void>): Promise<SubscriptionView> {
  const saved = await deps.db.transaction(async (trx) => {
    const { s, clock } = await writable(trx, deps, access, id);
    const next = await apply(s, clock.now(), clock, trx);
    if (next) await commit(trx, clock, deps.baseUrl, s, next);
    return next ?? (await findSubscription(trx, id, 'any'))!;
  });
  return (await viewsOf(deps.db, [saved]))[0];
}

/** Cancel at the period's end (with the customer's reason and comment), or take a pending cancellation back. */
function cancelOrUncancel(deps: SubscriptionDeps, access: Access, id: string, input: Extract<SubscriptionUpdate, { kind: 'cancel' }>) {
  return change(deps, access, id, async (s, now) => {
    const reason = input.customer_cancellation_reason === undefined ? s.customerCancellationReason : input.customer_cancellation_reason;
    const comment = input.customer_cancellation_comment === undefined ? s.customerCancellationComment : input.customer_cancellation_comment;
    if (input.cancel_at_period_end) {
      // As Polar: a subscription that has ended, or will at the period's end, cannot be canceled again (403).
      if (isTerminal(s.status) || s.status === 'unpaid' || s.cancelAtPeriodEnd || s.endsAt) throw alreadyCanceled();
      return { ...s, cancelAtPeriodEnd: true, canceledAt: s.canceledAt ?? now, endsAt: s.currentPeriodEnd, customerCancellationReason: reason, customerCancellationComment: comment, modifiedAt: now };
    }
    // Uncancel, as Polar answers it: 410 once the subscription has ended, 400 when no cancellation is pending.
    if (isTerminal(s.status) || s.status === 'unpaid') throw new CoreError('conflict', 'SUBSCRIPTION_ENDED', 'This subscription has ended: there is no cancellation to take back.');
    if (!s.cancelAtPeriodEnd) throw new CoreError('bad_request', 'SUBSCRIPTION_NOT_CANCELING', 'This subscription is not set to cancel: there is nothing to take back.');
    return { ...s, cancelAtPeriodEnd: false, canceledAt: null, endsAt: null, customerCancellationReason: null, customerCancellationComment: null, modifiedAt: now };
  });
}

/** Ends a subscription now (PATCH {revoke: true}, DELETE): benefits revoked, no more renewals or charges. */
export function revokeSubscription(deps: SubscriptionDeps, access: Access, id: string, input: Partial<SubscriptionRevoke> = {}): Promise<SubscriptionView> {
  return change(deps, access, id, async (s, now, clock, trx) => {
    if (isTerminal(s.status)) throw alreadyCanceled();
    await endSubscription(trx, clock, deps.baseUrl, s, now, {
      customerCancellationReason: input.customer_cancellation_reason === undefined ? s.customerCancellationReason : input.customer_cancellation_reason,
      customerCancellationComment: input.customer_cancellation_comment === undefined ? s.customerCancellationComment : input.customer_cancellation_comment,
    });
    return undefined;
  });
}

/**
 * Applies a discount to the subscription from its next charge on (the end of the trial or of the current
 * period), or removes it (`null`). The discount must be live, of the organization, valid now, allowed for the
 * product and — when fixed — in the subscription's currency; applying it counts one redemption.
 */
function updateDiscount(deps: SubscriptionDeps, access: Access, id: string, discountId: string | null) {
  return change(deps, access, id, async (s, now, _clock, trx) => {
    if (isTerminal(s.status)) throw alreadyCanceled();
    if (discountId === null) return s.discountId === null ? undefined : { ...s, discountId: null, discountStart: null, modifiedAt: now };
    if (discountId === s.discountId) return undefined;
    const discount = await findDiscount(trx, discountId, [s.organizationId], { forUpdate: true });
    if (!discount) throw invalid([issue('discount_id', 'Discount not found.')]);
    if ((discount.startsAt && discount.startsAt > now) || (discount.endsAt && discount.endsAt <= now)) throw invalid([issue('discount_id', 'This discount is not valid now.')]);
    if (discount.productIds.length > 0 && !discount.productIds.includes(s.productId)) throw invalid([issue('discount_id', 'This discount does not apply to the subscription’s product.')]);
    if (discount.type === 'fixed' && fixedAmountIn(discount, s.currency) === undefined) throw invalid([issue('discount_id', `This discount has no amount in ${s.currency}, the currency the subscription is billed in.`)]);
    if (!(await claimRedemption(trx, discount.id))) throw invalid([issue('discount_id', 'This discount has reached its maximum redemptions.')]);
    return { ...s, discountId: discount.id, discountStart: s.cycle < 0 ? s.billingAnchor : s.currentPeriodEnd, modifiedAt: now };
  });
}

/** PATCH /v1/subscriptions/{id}: cancel, uncancel, revoke, change product, or change discount. */
export async function updateSubscription(deps: SubscriptionDeps, access: Access, id: string, update: SubscriptionUpdate): Promise<SubscriptionView> {
  switch (update.kind) {
    case 'cancel':
      return cancelOrUncancel(deps, access, id, update);
    case 'revoke':
      return revokeSubscription(deps, access, id, update);
    case 'discount':
      return updateDiscount(deps, access, id, update.discount_id);
    case 'product': {
      const current = await findSubscription(deps.db, id, access.read);
      if (!current) throw subscriptionNotFound();
      const organization = await findOrganization(deps.db, current.organizationId);
      const behavior = update.proration_behavior ?? organization?.settings.subscription_settings.proration_behavior ?? 'prorate';
      return changeProduct(deps, access, id, update.product_id, behavior);
    }
  }
}

export { writable };
