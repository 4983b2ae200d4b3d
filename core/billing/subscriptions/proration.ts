import type { Line } from './lines.js';

/** `amount × part / whole`, rounded half up, in integers (no float error on large amounts or long periods). */
export function share(amount: number, part: number, whole: number): number {
  if (whole <= 0) return 0;
  const sign = amount < 0 ? -1n : 1n;
  const n = BigInt(Math.abs(amount)) * BigInt(Math.max(0, Math.min(part, whole)));
  return Number(sign * ((n * 2n + BigInt(whole)) / (2n * BigInt(whole))));
}

/**
 * The two lines of a plan change part-way through a period, as Polar prorates: a charge for the rest of the
 * period at the new price and a credit for the unused rest at the old one, both for the time left
 * (`now` to the period's end) over the period's length.
 */
export function prorationLines(input: {
  periodStart: Date;
  periodEnd: Date;
  now: Date;
  from: { label: string; amount: number; priceId: string | null };
  to: { label: string; amount: number; priceId: string | null };
}): Line[] {
  const whole = input.periodEnd.getTime() - input.periodStart.getTime();
  const left = input.periodEnd.getTime() - input.now.getTime();
  return [
    { label: `Remaining time on ${input.to.label}`, amount: share(input.to.amount, left, whole), proration: true, productPriceId: input.to.priceId },
    { label: `Unused time on ${input.from.label}`, amount: -share(input.from.amount, left, whole), proration: true, productPriceId: input.from.priceId },
  ];
}
