import type { Database } from '../../db/database.js';
import { isoformatInZone } from '../../metering/buckets.js';
import { computeAmounts } from '../pricing/amounts.js';
import { csvLine, majorUnits, pages, type CsvExport, type CsvValue } from '../shared/csv.js';
import { toSortCriteria } from '../shared/query.js';
import { discountTerms } from '../pricing/discount-terms.js';
import type { SubscriptionView } from './relations.js';
import type { SubscriptionFilter } from './repository.js';
import type { Subscription } from './schema.js';
import { listSubscriptions } from './service.js';

/** Polar's subscription export columns, each with its header; the first seven are the default. */
export const SUBSCRIPTION_EXPORT_COLUMNS = {
  email: 'Email',
  started_at: 'Started At',
  product: 'Product',
  amount: 'Amount',
  currency: 'Currency',
  status: 'Status',
  recurring_interval: 'Billing Interval',
  customer_name: 'Customer Name',
  billing_name: 'Billing Name',
  billing_country: 'Billing Country',
  net_amount: 'Net Amount',
  discount: 'Discount',
  seats: 'Seats',
  current_period_start: 'Current Period Start',
  current_period_end: 'Current Period End',
  cancel_at_period_end: 'Cancels At Period End',
  canceled_at: 'Canceled At',
  ends_at: 'Ends At',
  ended_at: 'Ended At',
  cancellation_reason: 'Cancellation Reason',
  trial_start: 'Trial Start',
  trial_end: 'Trial End',
} as const;
export type SubscriptionExportColumn = keyof typeof SUBSCRIPTION_EXPORT_COLUMNS;
export const SUBSCRIPTION_EXPORT_COLUMN_NAMES = Object.keys(SUBSCRIPTION_EXPORT_COLUMNS) as [SubscriptionExportColumn, ...SubscriptionExportColumn[]];
const DEFAULT_COLUMNS = SUBSCRIPTION_EXPORT_COLUMN_NAMES.slice(0, 7);

export interface SubscriptionExportOptions {
  /** IANA zone the dates are written in (Polar: UTC by default). */
  timeZone: string;
  columns?: readonly SubscriptionExportColumn[];
}

const interval = (s: Subscription) => (s.recurringIntervalCount === 1 ? s.recurringInterval : `${s.recurringIntervalCount} ${s.recurringInterval}s`);

function values({ subscription: s, customer, product, discount }: SubscriptionView, timeZone: string): Record<SubscriptionExportColumn, CsvValue> {
  const date = (value: Date | null) => (value ? isoformatInZone(value, timeZone) : null);
  const net = computeAmounts({ subtotalAmount: s.amount, discount: discountTerms(discount, s.currency), taxBasisPoints: 0 }).netAmount;
  return {
    email: customer.email,
    started_at: date(s.startedAt),
    product: product.name,
    amount: majorUnits(s.amount),
    currency: s.currency,
    status: s.status,
    recurring_interval: interval(s),
    customer_name: customer.name,
    billing_name: customer.billingName,
    billing_country: customer.billingAddress?.country,
    net_amount: majorUnits(net),
    discount: discount ? discount.code || discount.name : null,
    // Till sells no seats.
    seats: null,
    current_period_start: date(s.currentPeriodStart),
    current_period_end: date(s.currentPeriodEnd),
    cancel_at_period_end: s.cancelAtPeriodEnd ? 'true' : 'false',
    canceled_at: date(s.canceledAt),
    ends_at: date(s.endsAt),
    ended_at: date(s.endedAt),
    cancellation_reason: s.customerCancellationReason,
    trial_start: date(s.trialStart),
    trial_end: date(s.trialEnd),
  };
}

function filename(filter: SubscriptionFilter, timeZone: string): string {
  const bounds = [filter.startedAfter, filter.startedBefore].filter((bound): bound is Date => bound !== undefined);
  return `polar-subscriptions${bounds.map((bound) => `-${isoformatInZone(bound, timeZone).slice(0, 10)}`).join('')}.csv`;
}

/** subscriptions.export: the subscriptions the filter finds, as Polar's CSV (oldest first), in the columns asked for. */
export function exportSubscriptions(db: Database, filter: SubscriptionFilter, options: SubscriptionExportOptions): CsvExport {
  const columns = options.columns?.length ? options.columns : DEFAULT_COLUMNS;
  const sorting = toSortCriteria(['created_at']);
  async function* lines() {
    yield csvLine(columns.map((column) => SUBSCRIPTION_EXPORT_COLUMNS[column]));
    for await (const view of pages((page) => listSubscriptions(db, filter, sorting, page))) {
      const row = values(view, options.timeZone);
      yield csvLine(columns.map((column) => row[column]));
    }
  }
  return { filename: filename(filter, options.timeZone), lines: lines() };
}
