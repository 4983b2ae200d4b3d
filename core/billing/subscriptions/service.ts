import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { scheduleJob } from '../../jobs/jobs.js';
import type { Metadata } from '../shared/metadata.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { announceChange } from './events.js';
import { RENEW_JOB } from './job-kinds.js';
import { periodOf } from './periods.js';
import { viewsOf, type SubscriptionView } from './relations.js';
import { findSubscription, insertSubscription, listSubscriptions as listRows, type SubscriptionFilter } from './repository.js';
import { SUBSCRIPTION_INTERVALS, type Subscription, type SubscriptionInterval } from './schema.js';

export const subscriptionNotFound = () => new CoreError('not_found', 'SUBSCRIPTION_NOT_FOUND', 'Subscription not found');

/** What a recurring checkout hands over when its payment (or its trial) has started a subscription. */
export interface SubscriptionCreateInput {
  organizationId: string;
  customerId: string;
  productId: string;
  priceIds: string[];
  /** One period's price before discount and tax. */
  amount: number;
  currency: string;
  recurringInterval: string;
  recurringIntervalCount: number;
  discountId: string | null;
  checkoutId: string | null;
  /** The method renewals charge; none: the customer's newest saved method. */
  paymentMethodId: string | null;
  /** The end of a trial the product grants; the first charge is then at that time. */
  trialEnd: Date | null;
  metadata: Metadata;
  customFieldData: Record<string, unknown>;
  /** The daemon's public URL, for the product media URLs in the events (optional: relative URLs without it). */
  baseUrl?: string;
}

const isInterval = (value: string): value is SubscriptionInterval => (SUBSCRIPTION_INTERVALS as readonly string[]).includes(value);

/**
 * Starts a subscription inside the caller's transaction (checkout fulfilment): active on its first paid period,
 * or trialing until `trialEnd`. Schedules its renewal (or the end of its trial) on the organization's clock,
 * which `clock` must be, and emits subscription.created (and .active).
 */
export async function createSubscription(
  trx: Knex.Transaction,
  clock: Clock,
  input: SubscriptionCreateInput,
): Promise<{ id: string; status: string; currentPeriodStart: Date; currentPeriodEnd: Date }> {
  if (!isInterval(input.recurringInterval)) throw new CoreError('invalid', 'INVALID_SUBSCRIPTION', `Unknown recurring interval ${input.recurringInterval}`);
  if (!Number.isSafeInteger(input.amount) || input.amount < 0) throw new CoreError('invalid', 'INVALID_SUBSCRIPTION', 'A subscription amount is a non-negative integer');
  const now = clock.now();
  const trial = input.trialEnd !== null && input.trialEnd.getTime() > now.getTime();
  const anchor = trial ? input.trialEnd! : now;
  const period = trial ? { start: now, end: anchor } : periodOf(anchor, input.recurringInterval, input.recurringIntervalCount, 0);
  const subscription: Subscription = {
    id: newId(),
    organizationId: input.organizationId,
    customerId: input.customerId,
    productId: input.productId,
    discountId: input.discountId,
    checkoutId: input.checkoutId,
    paymentMethodId: input.paymentMethodId,
    status: trial ? 'trialing' : 'active',
    amount: input.amount,
    currency: input.currency,
    recurringInterval: input.recurringInterval,
    recurringIntervalCount: input.recurringIntervalCount,
    billingAnchor: anchor,
    cycle: trial ? -1 : 0,
    currentPeriodStart: period.start,
    currentPeriodEnd: period.end,
    trialStart: trial ? now : null,
    trialEnd: trial ? anchor : null,
    cancelAtPeriodEnd: false,
    canceledAt: null,
    startedAt: now,
    endsAt: null,
    endedAt: null,
    pastDueAt: null,
    dunningAttempts: 0,
    dunningOrderId: null,
    // The checkout's charge paid the first period with the discount; after a trial, the first paid period has it.
    discountStart: input.discountId ? anchor : null,
    customerCancellationReason: null,
    customerCancellationComment: null,
    pendingItems: [],
    metadata: input.metadata,
    customFieldData: input.customFieldData,
    priceIds: input.priceIds,
    createdAt: now,
    modifiedAt: null,
  };
  await insertSubscription(trx, subscription);
  await scheduleJob(trx, { organizationId: subscription.organizationId, kind: RENEW_JOB, subjectId: subscription.id, runAt: period.end });
  await announceChange(trx, clock, input.baseUrl ?? '', null, subscription);
  return { id: subscription.id, status: subscription.status, currentPeriodStart: period.start, currentPeriodEnd: period.end };
}

export async function getSubscription(db: Database, readable: ReadonlySet<string>, id: string): Promise<SubscriptionView> {
  const found = await findSubscription(db, id, readable);
  if (!found) throw subscriptionNotFound();
  return (await viewsOf(db, [found]))[0];
}

export async function listSubscriptions(db: Database, filter: SubscriptionFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<SubscriptionView>> {
  const stored = await listRows(db, filter, sorting, page);
  return { items: await viewsOf(db, stored.items), totalCount: stored.totalCount };
}
