/**
 * Till's dunning schedule: after a renewal charge fails the subscription is past_due and the charge is retried
 * this many days after the previous attempt — 2, then 5, then 7, then 7 days (retries on days 2, 7, 14 and 21
 * after the first failure, as Polar schedules them). When the last retry fails too, the subscription is
 * canceled and its benefits revoked. A successful retry makes it active again on its current period.
 */
export const DUNNING_RETRY_DAYS: readonly number[] = [2, 5, 7, 7];

const DAY_MS = 86_400_000;

/** When to retry after `failedAttempts` failed charges of one order; undefined once the schedule is exhausted. */
export function nextRetryAt(failedAt: Date, failedAttempts: number): Date | undefined {
  const days = DUNNING_RETRY_DAYS[failedAttempts - 1];
  return days === undefined ? undefined : new Date(failedAt.getTime() + days * DAY_MS);
}
