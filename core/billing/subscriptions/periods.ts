import { addInterval } from '../shared/time.js';
import type { StoredDiscount } from '../discounts/schema.js';
import type { Subscription, SubscriptionInterval } from './schema.js';

/** Period `cycle` of a subscription: anchor + cycle intervals to anchor + (cycle + 1) intervals, never drifting. */
export function periodOf(anchor: Date, interval: SubscriptionInterval, count: number, cycle: number): { start: Date; end: Date } {
  return { start: addInterval(anchor, interval, cycle * count), end: addInterval(anchor, interval, (cycle + 1) * count) };
}

/** The period after the current one (the first paid period when the current one is the trial). */
export const nextPeriodOf = (s: Pick<Subscription, 'billingAnchor' | 'recurringInterval' | 'recurringIntervalCount' | 'cycle'>) =>
  periodOf(s.billingAnchor, s.recurringInterval, s.recurringIntervalCount, s.cycle + 1);

/**
 * Whether a discount still applies to the period starting at `periodStart`, counted from `discountStart` (the
 * first period it applied to): `once` to that period only, `repeating` to the periods starting within
 * duration_in_months months of it, `forever` always. A discount past its ends_at keeps applying to the
 * subscriptions that took it (ends_at only closes it to new checkouts), as Polar does.
 */
export function discountApplies(discount: Pick<StoredDiscount, 'duration' | 'durationInMonths'>, discountStart: Date | null, periodStart: Date): boolean {
  if (discountStart === null) return false;
  switch (discount.duration) {
    case 'forever':
      return true;
    case 'once':
      return periodStart.getTime() <= discountStart.getTime();
    case 'repeating':
      return periodStart.getTime() < addInterval(discountStart, 'month', discount.durationInMonths ?? 0).getTime();
  }
}
