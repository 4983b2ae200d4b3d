import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { mapInSlices } from '../../loop.js';
import { dialectOf, type Database, type Executor } from '../../db/database.js';
import { recordEvent, recordEvents } from '../../webhooks/outbox.js';
import { activeCustomerMeters } from '../../metering/customer-meters.js';
import { serializeCustomerStateMeter } from '../../metering/serialize.js';
import { activeGrantsOf, activeGrantsOfCustomers } from '../benefit-grants/repository.js';
import { findBenefits } from '../benefits/repository.js';
import { findCustomers } from '../customers/repository.js';
import type { Customer } from '../customers/schema.js';
import { serializeCustomer } from '../customers/serialize.js';
import { subscriptionsOfCustomer, subscriptionsOfCustomers } from '../subscriptions/repository.js';
import { ACTIVE_STATUSES, type Subscription } from '../subscriptions/schema.js';
import type { BenefitGrant } from '../benefit-grants/schema.js';
import type { Benefit } from '../benefits/schema.js';
import type { CustomerMeter } from '../../metering/schema.js';
import { customerNotFound } from '../customers/errors.js';
import { customerStateRowsOnPostgres } from './repository.js';

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** Polar's CustomerStateSubscription: an active or trialing subscription, without its relations. */
function serializeStateSubscription(subscription: Subscription) {
  return {
    id: subscription.id,
    created_at: subscription.createdAt.toISOString(),
    modified_at: iso(subscription.modifiedAt),
    custom_field_data: subscription.customFieldData,
    metadata: subscription.metadata,
    status: subscription.status,
    amount: subscription.amount,
    currency: subscription.currency,
    recurring_interval: subscription.recurringInterval,
    current_period_start: subscription.currentPeriodStart.toISOString(),
    current_period_end: subscription.currentPeriodEnd.toISOString(),
    trial_start: iso(subscription.trialStart),
    trial_end: iso(subscription.trialEnd),
    cancel_at_period_end: subscription.cancelAtPeriodEnd,
    canceled_at: iso(subscription.canceledAt),
    started_at: iso(subscription.startedAt),
    ends_at: iso(subscription.endsAt),
    product_id: subscription.productId,
    discount_id: subscription.discountId,
    // Metered usage per subscription comes with metering.
    meters: [] as unknown[],
  };
}

/** Polar's CustomerStateBenefitGrant: a grant in effect, with its benefit's type and metadata. */
function serializeStateGrant(grant: BenefitGrant, benefit: Benefit) {
  return {
    id: grant.id,
    created_at: grant.createdAt.toISOString(),
    modified_at: iso(grant.modifiedAt),
    granted_at: (grant.grantedAt ?? grant.createdAt).toISOString(),
    benefit_id: benefit.id,
    benefit_type: benefit.type,
    benefit_metadata: benefit.metadata,
    properties: grant.properties,
  };
}

/**
 * Polar's CustomerState: the customer with its active (and trialing) subscriptions, the benefits granted to it
 * now, and its active meters (consumed, credited and balance per meter, as metering last computed them).
 */
export async function customerStateOf(db: Executor, customer: Customer, meters?: readonly CustomerMeter[]) {
  const subscriptions = await subscriptionsOfCustomer(db, customer.id, ACTIVE_STATUSES);
  const grants = await activeGrantsOf(db, customer.id);
  const benefits = await findBenefits(db, customer.organizationId, [...new Set(grants.map((g) => g.benefitId))]);
  return stateOf(customer, subscriptions, grants, benefits, meters ?? (await activeCustomerMeters(db, customer.id)));
}

/**
 * GET /v1/customers/{id}/state: the state of a live customer of the readable organizations (404 otherwise). On
 * PostgreSQL the customer, its subscriptions, grants and benefits are read in one statement
 * (customerStateRowsOnPostgres), and its meters only when it has some; on SQLite, where a query costs no round trip,
 * as customerStateOf reads them.
 */
export async function customerStateById(db: Database, readable: ReadonlySet<string>, id: string): Promise<CustomerStateWire> {
  if (dialectOf(db) !== 'postgres') {
    const [customer] = await findCustomers(db, { id }, [...readable]);
    if (!customer) throw customerNotFound();
    return customerStateOf(db, customer);
  }
  const rows = await customerStateRowsOnPostgres(db, id, readable);
  if (!rows) throw customerNotFound();
  const meters = rows.hasMeters ? await activeCustomerMeters(db, id) : [];
  return stateOf(rows.customer, rows.subscriptions, rows.grants, rows.benefits, meters);
}

/** The state's wire form from what it is made of (grants whose benefit is not among `benefits` are left out). */
function stateOf(customer: Customer, subscriptions: readonly Subscription[], grants: readonly BenefitGrant[], benefits: readonly Benefit[], meters: readonly CustomerMeter[]) {
  const byId = new Map(benefits.map((b) => [b.id, b]));
  return {
    ...serializeCustomer(customer),
    active_subscriptions: subscriptions.map(serializeStateSubscription),
    granted_benefits: grants.flatMap((grant) => {
      const benefit = byId.get(grant.benefitId);
      return benefit ? [serializeStateGrant(grant, benefit)] : [];
    }),
    active_meters: meters.map(serializeCustomerStateMeter),
  };
}
export type CustomerStateWire = ReturnType<typeof stateOf>;

/**
 * Emits customer.state_changed with the customer's state as GET /v1/customers/{id}/state answers it. Call it in
 * the transaction of the change (a subscription's status, a grant); a customer no longer live is not announced.
 */
export async function announceCustomerState(
  trx: Knex.Transaction,
  clock: Clock,
  organizationId: string,
  customerId: string,
  /** What the caller has just read in this transaction: the customer, and its meters as activeCustomerMeters lists them. */
  known?: { customer: Customer; meters?: readonly CustomerMeter[] },
): Promise<void> {
  const customer = known?.customer ?? (await findCustomers(trx, { id: customerId }, [organizationId]))[0];
  if (!customer) return;
  await recordEvent(trx, clock, { organizationId, type: 'customer.state_changed', data: await customerStateOf(trx, customer, known?.meters) });
}

/**
 * announceCustomerState for several customers of one organization whose meters the caller has just stored (a metering
 * refresh run): their subscriptions, grants and benefits read in one statement each instead of one set a customer.
 */
export async function announceCustomerStates(trx: Knex.Transaction, clock: Clock, organizationId: string, known: readonly { customer: Customer; meters: readonly CustomerMeter[] }[]): Promise<void> {
  if (known.length === 0) return;
  const ids = known.map(({ customer }) => customer.id);
  const subscriptions = await subscriptionsOfCustomers(trx, ids, ACTIVE_STATUSES);
  const grants = await activeGrantsOfCustomers(trx, ids);
  const benefits = await findBenefits(trx, organizationId, [...new Set([...grants.values()].flatMap((list) => list.map((grant) => grant.benefitId)))]);
  // Up to a refresh run's worth of customers (250 on PostgreSQL): built a slice of the event loop at a time.
  const events = await mapInSlices(known, ({ customer, meters }) => ({ type: 'customer.state_changed' as const, data: stateOf(customer, subscriptions.get(customer.id) ?? [], grants.get(customer.id) ?? [], benefits, meters) }));
  await recordEvents(trx, clock, organizationId, events);
}
