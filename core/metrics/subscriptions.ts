import type { SubscriptionMetricRow } from './repository.js';
import { REASON_METRICS, type MetricSlug } from './schema.js';

/**
 * The buckets of a metrics answer as the subscription metrics see them: where each interval starts and ends on
 * the timezone's calendar (`starts[k]` to `ends[k]`, unclipped), the asked range [rangeStart, rangeEnd], and for each
 * bucket the window its churn rate looks at.
 */
export interface Timeline {
  starts: readonly number[];
  ends: readonly number[];
  rangeStart: number;
  rangeEnd: number;
  churnWindows: readonly { from: number; to: number }[];
}

/** The bucket holding the instant: -1 before the first, `n` after the last. */
export function bucketOf(timeline: Timeline, instant: number): number {
  const { starts, ends } = timeline;
  if (instant < starts[0]!) return -1;
  if (instant >= ends[ends.length - 1]!) return starts.length;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= instant) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * A subscription's price as a monthly amount, as Polar normalizes it: a year is 12 months, a week 52/12 of a
 * month, a day 365/12; an interval of `count` units divides by `count`. Rounded half up to a minor unit.
 */
export function monthlyAmount(amount: number, interval: string, count: number): number {
  const c = Math.max(1, count);
  switch (interval) {
    case 'year':
      return Math.round(amount / (12 * c));
    case 'week':
      return Math.round((amount * 52) / (12 * c));
    case 'day':
      return Math.round((amount * 365) / (12 * c));
    default:
      return Math.round(amount / c);
  }
}

type Series = Partial<Record<MetricSlug, number[]>>;

/** Adds `value` to every bucket of [from, to) through a difference array (cumulated afterwards). */
function addRange(diff: number[], from: number, to: number, value: number) {
  const a = Math.max(0, from);
  const b = Math.min(diff.length - 1, to);
  if (a >= b) return;
  diff[a]! += value;
  diff[b]! -= value;
}

const cumulate = (diff: number[]) => {
  let running = 0;
  return diff.slice(0, -1).map((d) => (running += d));
};

/** Sorted copy, for counting with binary search. */
const sorted = (values: number[]) => Float64Array.from(values).sort();
function countBelow(values: Float64Array, limit: number, inclusive: boolean): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! < limit || (inclusive && values[mid] === limit)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The subscription metrics of every bucket (see docs/metrics.md): active and committed subscriptions, MRR and its
 * committed and trialing variants, ARPU, new, canceled (by reason) and churned subscriptions, and the churn rate.
 */
export function subscriptionSeries(timeline: Timeline, rows: readonly SubscriptionMetricRow[]): Series {
  const n = timeline.starts.length;
  const zeros = () => new Array<number>(n + 1).fill(0);
  const diff = { active: zeros(), committed: zeros(), mrr: zeros(), committedMrr: zeros(), trialMrr: zeros(), trialCommittedMrr: zeros(), customers: zeros() };
  const counted: Record<string, number[]> = { new_subscriptions: zeros(), canceled_subscriptions: zeros(), churned_subscriptions: zeros() };
  for (const slug of REASON_METRICS.keys()) counted[slug] = zeros();
  const reasonSlug = new Map([...REASON_METRICS].map(([slug, reason]) => [reason, slug]));
  const customerSpans = new Map<string, [number, number][]>();
  const inRange = (at: number) => at >= timeline.rangeStart && at <= timeline.rangeEnd;

  for (const s of rows) {
    const started = s.startedAt;
    const ended = s.endsOrEndedAt;
    if (started !== null && inRange(started)) counted.new_subscriptions![bucketOf(timeline, started)]! += 1;
    if (ended !== null && inRange(ended)) counted.churned_subscriptions![bucketOf(timeline, ended)]! += 1;
    if (s.canceledAt !== null && inRange(s.canceledAt)) {
      const k = bucketOf(timeline, s.canceledAt);
      counted.canceled_subscriptions![k]! += 1;
      counted[reasonSlug.get(s.cancellationReason ?? 'other') ?? 'canceled_subscriptions_other']![k]! += 1;
    }

    // Active in bucket k when it started in k or before and ends (or ended) after k, as Polar's date_trunc join has it.
    if ((started !== null && started > timeline.rangeEnd) || (ended !== null && ended < timeline.rangeStart)) continue;
    const from = started === null ? 0 : bucketOf(timeline, started);
    const to = ended === null ? n : bucketOf(timeline, ended);
    if (from >= to) continue;
    const monthly = monthlyAmount(s.amount, s.recurringInterval, s.recurringIntervalCount);
    // Out of its trial from the bucket its trial ends in (the trial ends before that bucket does).
    const paying = s.trialEnd === null ? from : Math.max(from, bucketOf(timeline, s.trialEnd));
    const committed = ended === null;
    addRange(diff.active, from, to, 1);
    addRange(diff.mrr, paying, to, monthly);
    addRange(diff.trialMrr, from, Math.min(to, paying), monthly);
    if (committed) {
      addRange(diff.committed, from, to, 1);
      addRange(diff.committedMrr, paying, to, monthly);
      addRange(diff.trialCommittedMrr, from, Math.min(to, paying), monthly);
    }
    const spans = customerSpans.get(s.customerId) ?? [];
    spans.push([Math.max(0, from), Math.min(n, to)]);
    customerSpans.set(s.customerId, spans);
  }

  // A customer with several subscriptions counts once in a bucket: merge their spans before counting.
  for (const spans of customerSpans.values()) {
    spans.sort((a, b) => a[0] - b[0]);
    let [a, b] = spans[0]!;
    for (const [c, d] of spans.slice(1)) {
      if (c <= b) b = Math.max(b, d);
      else {
        addRange(diff.customers, a, b, 1);
        [a, b] = [c, d];
      }
    }
    addRange(diff.customers, a, b, 1);
  }

  const mrr = cumulate(diff.mrr);
  const committedMrr = cumulate(diff.committedMrr);
  const customers = cumulate(diff.customers);
  const series: Series = {
    active_subscriptions: cumulate(diff.active),
    committed_subscriptions: cumulate(diff.committed),
    monthly_recurring_revenue: mrr,
    committed_monthly_recurring_revenue: committedMrr,
    trial_monthly_recurring_revenue: cumulate(diff.trialMrr),
    trial_committed_monthly_recurring_revenue: cumulate(diff.trialCommittedMrr),
    annual_recurring_revenue: mrr.map((v) => v * 12),
    committed_annual_recurring_revenue: committedMrr.map((v) => v * 12),
    average_revenue_per_user: mrr.map((v, k) => (customers[k] ? Math.round(v / customers[k]!) : 0)),
    churn_rate: churnRates(timeline, rows),
  };
  for (const [slug, values] of Object.entries(counted)) series[slug as MetricSlug] = values.slice(0, n);
  return series;
}

/**
 * Polar's churn rate of each bucket: the subscriptions canceled in its window over those active when the window
 * opens (started by then, not ended by then); 0 when none were active.
 */
function churnRates(timeline: Timeline, rows: readonly SubscriptionMetricRow[]): number[] {
  const starts = sorted(rows.map((s) => s.startedAt ?? -Infinity));
  const ends = sorted(rows.flatMap((s) => (s.endsOrEndedAt === null ? [] : [s.endsOrEndedAt])));
  const cancels = sorted(rows.flatMap((s) => (s.canceledAt === null ? [] : [s.canceledAt])));
  return timeline.churnWindows.map(({ from, to }) => {
    const active = countBelow(starts, from, true) - countBelow(ends, from, true);
    const canceled = countBelow(cancels, to, false) - countBelow(cancels, from, false);
    return active > 0 ? canceled / active : 0;
  });
}
