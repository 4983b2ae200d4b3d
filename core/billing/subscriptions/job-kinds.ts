/** A subscription's next period boundary: renew it, start its first paid period after a trial, or end it. */
export const RENEW_JOB = 'subscription.renew';
/** Charge the order a subscription owes (a renewal or a plan change), and retry it on the dunning schedule. */
export const CHARGE_JOB = 'subscription.charge';
