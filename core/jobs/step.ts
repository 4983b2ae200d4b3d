import { addInterval, type CalendarInterval } from '../billing/shared/time.js';

const UNITS: Record<string, { ms: number } | { calendar: CalendarInterval }> = {
  s: { ms: 1000 }, sec: { ms: 1000 }, second: { ms: 1000 }, seconds: { ms: 1000 },
  m: { ms: 60_000 }, min: { ms: 60_000 }, minute: { ms: 60_000 }, minutes: { ms: 60_000 },
  h: { ms: 3_600_000 }, hour: { ms: 3_600_000 }, hours: { ms: 3_600_000 },
  d: { calendar: 'day' }, day: { calendar: 'day' }, days: { calendar: 'day' },
  w: { calendar: 'week' }, week: { calendar: 'week' }, weeks: { calendar: 'week' },
  mo: { calendar: 'month' }, month: { calendar: 'month' }, months: { calendar: 'month' },
  y: { calendar: 'year' }, year: { calendar: 'year' }, years: { calendar: 'year' },
};

export const CLOCK_STEP_PATTERN = /^\+?(\d{1,6})\s*([a-z]+)$/;

/**
 * The time `step` after `from`: `+1month`, `+2 weeks`, `+3d`, `+12h`, `+1year`. Months and years are calendar
 * steps (Jan 31 + 1 month = Feb 28). Undefined when the step does not parse.
 */
export function applyClockStep(from: Date, step: string): Date | undefined {
  const match = CLOCK_STEP_PATTERN.exec(step.trim().toLowerCase());
  if (!match) return undefined;
  const count = Number(match[1]);
  const unit = UNITS[match[2]];
  if (!unit || count === 0) return undefined;
  return 'ms' in unit ? new Date(from.getTime() + count * unit.ms) : addInterval(from, unit.calendar, count);
}
