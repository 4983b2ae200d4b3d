import { CoreError } from '../../errors.js';
import { hasBillableSubscription } from '../subscriptions/repository.js';
import { dialectOf, type Executor } from '../../db/database.js';
import { discountRedemptionsNear, hasSubscriptionCheckoutInFlight, trialRedeemedBy } from './repository.js';
import type { Checkout } from './schema.js';

/**
 * An address as Polar compares it for trials (`unalias_email`): the `+tag` of the local part dropped, lower case,
 * so `Ann+2@x.com` took the same trial as `ann@x.com`.
 */
export function comparableEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 0) return email.toLowerCase();
  return `${email.slice(0, at).split('+', 1)[0]}@${email.slice(at + 1)}`.toLowerCase();
}

/**
 * Polar's `_validate_subscription_uniqueness`, run on every update and on confirm: with the organization's
 * subscription_settings.allow_multiple_subscriptions off, a checkout of a recurring product for a customer (by id,
 * else by email) who already has a trialing, active or past due subscription in the organization is refused with
 * 403 AlreadyActiveSubscriptionError. Nothing to check before the customer is known. Another checkout of a recurring
 * product confirmed for the same customer and still waiting on its payment counts as a subscription: paid, it is one.
 */
export async function assertCanSubscribe(db: Executor, checkout: Checkout): Promise<void> {
  if (checkout.organization.settings.subscription_settings.allow_multiple_subscriptions) return;
  if (checkout.product.recurringInterval === null) return;
  const who = { customerId: checkout.customerId, email: checkout.customerEmail };
  if (await hasBillableSubscription(db, checkout.organizationId, who)) {
    throw new CoreError('forbidden', 'ALREADY_ACTIVE_SUBSCRIPTION', 'You already have an active subscription.');
  }
  // Abandoned, such a payment is given up within the action window (30 minutes), and this checkout can go through.
  if (await hasSubscriptionCheckoutInFlight(db, checkout.organizationId, checkout.id, who)) {
    throw new CoreError('forbidden', 'ALREADY_ACTIVE_SUBSCRIPTION', 'The payment of another subscription of yours is still being confirmed. Finish it, or try again in 30 minutes if you left it.');
  }
}

/**
 * The checks below, run again in the transaction that claims the checkout, with the customer held: two checkouts
 * confirmed at the same moment for one customer (or one address) cannot both pass them before either is claimed.
 * PostgreSQL: transaction-scoped advisory locks on the customer's id and on the address as the trial check compares
 * it, always taken in the same order; SQLite's single writer serializes the claims already.
 */
export async function holdCheckoutCustomer(trx: Executor, checkout: Checkout): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  const keys = [
    checkout.customerId ? `checkout-customer:id:${checkout.customerId}` : null,
    checkout.customerEmail ? `checkout-customer:email:${checkout.organizationId}:${comparableEmail(checkout.customerEmail)}` : null,
  ].filter((key): key is string => key !== null).sort();
  for (const key of keys) await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [key]);
}

/** Every rule a checkout must pass before it is paid: subscriptions, trials and the per-customer discount limit. */
export async function assertCheckoutRules(db: Executor, checkout: Checkout): Promise<void> {
  await assertCanSubscribe(db, checkout);
  await assertTrialAvailable(db, checkout);
  await assertDiscountRedeemable(db, checkout);
}

/**
 * Polar's trial abuse check at confirm: with subscription_settings.prevent_trial_abuse on, a checkout that would
 * start a trial for an address that already took one in the organization (any product) is refused with 403
 * TrialAlreadyRedeemed; the customer may pay without the trial (allow_trial: false) instead.
 */
export async function assertTrialAvailable(db: Executor, checkout: Checkout): Promise<void> {
  if (checkout.trialEnd === null || !checkout.customerEmail) return;
  if (!checkout.organization.settings.subscription_settings.prevent_trial_abuse) return;
  if (await trialRedeemedBy(db, checkout.organizationId, comparableEmail(checkout.customerEmail))) {
    throw new CoreError('forbidden', 'TRIAL_ALREADY_REDEEMED', 'You have already used a trial for this product. Trials can only be used once per customer.');
  }
}

/**
 * Polar's per-customer discount limit (`max_redemptions_per_customer`), checked when the customer applies a code
 * or fills in their address, and again at confirm: the checkouts that redeemed the discount for the same customer
 * id or the same address (without its +tag, any case), this one aside, must be fewer than the limit; otherwise 403
 * DiscountRedemptionLimitReached. Till does not compare card fingerprints (it keeps none).
 */
export async function assertDiscountRedeemable(db: Executor, checkout: Checkout): Promise<void> {
  const limit = checkout.discount?.maxRedemptionsPerCustomer ?? null;
  if (limit === null || !checkout.discountId) return;
  const email = checkout.customerEmail ? comparableEmail(checkout.customerEmail) : null;
  const domain = email ? email.slice(email.lastIndexOf('@') + 1) : null;
  const near = await discountRedemptionsNear(db, checkout.discountId, checkout.id, { customerId: checkout.customerId, emailDomain: domain });
  const mine = near.filter((r) => (checkout.customerId !== null && r.customerId === checkout.customerId) || (email !== null && r.customerEmail !== null && comparableEmail(r.customerEmail) === email));
  if (mine.length >= limit) {
    throw new CoreError('forbidden', 'DISCOUNT_REDEMPTION_LIMIT_REACHED', 'You have already redeemed this discount the maximum number of times allowed per customer.');
  }
}
