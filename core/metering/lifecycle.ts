import { newTimeOrderedId } from '../db/columns.js';
import type { Executor } from '../db/database.js';
import { insertEvents, saveEventMetadata, systemEventsOfCustomer } from './events-repository.js';
import type { EventMetadata, StoredEvent } from './schema.js';

/**
 * Polar's lifecycle system events (server/polar/event/system.py): beside the webhook a change sends, Polar writes an
 * event of source `system` for the customer concerned, which GET /v1/events lists with the user's events. Till
 * derives them in ONE place, from the webhook event recordEvent writes (its type, its data as the API serializes
 * it, and, for the changes whose meaning depends on it, the object before the change), so each is written in the
 * transaction of the change it reports and never without it.
 */

/** Polar's labels of its system event names (SYSTEM_EVENT_LABELS). */
export const SYSTEM_EVENT_LABELS: Readonly<Record<string, string>> = {
  'meter.credited': 'Meter Credited',
  'meter.reset': 'Meter Reset',
  'benefit.granted': 'Benefit Granted',
  'benefit.cycled': 'Benefit Cycled',
  'benefit.updated': 'Benefit Updated',
  'benefit.revoked': 'Benefit Revoked',
  'subscription.created': 'Subscription Created',
  'subscription.updated': 'Subscription Updated',
  'subscription.canceled': 'Subscription Canceled',
  'subscription.cycled': 'Subscription Cycled',
  'subscription.revoked': 'Subscription Revoked',
  'subscription.past_due': 'Subscription Past Due',
  'subscription.uncanceled': 'Subscription Uncanceled',
  'subscription.product_updated': 'Subscription Product Updated',
  'order.paid': 'Order Paid',
  'order.refunded': 'Order Refunded',
  'checkout.created': 'Checkout Created',
  'customer.created': 'Customer Created',
  'customer.updated': 'Customer Updated',
  'customer.deleted': 'Customer Deleted',
};

/** A webhook event as recordEvent takes it; `previous` holds fields of the object before the change (wire names). */
export interface LifecycleChange {
  type: string;
  data: unknown;
  previous?: Record<string, unknown> | null;
  /** How the change was made, where Polar's metadata says it (a plan change's `proration_behavior`). */
  detail?: Record<string, unknown>;
}

/** A system event to write: its name, its customer and Polar's metadata for it. */
export interface LifecycleEvent {
  name: string;
  customerId: string | null;
  externalCustomerId: string | null;
  metadata: Record<string, unknown>;
  /** When it happened, if not now (Polar dates subscription.created and customer.created at the object's creation). */
  at?: Date;
}

type Wire = Record<string, any>;

/** The keys whose value is not undefined (Polar leaves a NotRequired key out rather than sending null). */
const present = (metadata: Record<string, unknown>) => Object.fromEntries(Object.entries(metadata).filter(([, value]) => value !== undefined));
const unlessNull = <T>(value: T | null | undefined) => (value === null ? undefined : value);
/** The object's creation time when it carries one (else the event takes the change's time). */
const createdAt = (object: Wire) => {
  const at = typeof object.created_at === 'string' ? new Date(object.created_at) : undefined;
  return at && !Number.isNaN(at.getTime()) ? at : undefined;
};

/** Customer of an object embedding one (`customer`), else by its `customer_id`. */
const customerOf = (object: Wire) => ({ customerId: (object.customer_id as string | null) ?? null, externalCustomerId: (object.customer?.external_id as string | null) ?? null });

const subscriptionBasics = (s: Wire) => ({
  subscription_id: s.id,
  product_id: s.product_id,
  amount: s.amount,
  currency: s.currency,
  recurring_interval: s.recurring_interval,
  recurring_interval_count: s.recurring_interval_count,
});

function orderPaid(order: Wire): Record<string, unknown> {
  return present({
    order_id: order.id,
    product_id: unlessNull(order.product_id),
    billing_type: order.product ? (order.product.is_recurring ? 'recurring' : 'one_time') : 'one_time',
    amount: order.total_amount,
    currency: order.currency,
    net_amount: order.net_amount,
    tax_amount: order.tax_amount,
    applied_balance_amount: order.applied_balance_amount,
    discount_amount: order.discount_amount,
    platform_fee: order.platform_fee_amount,
    discount_id: unlessNull(order.discount_id),
    subscription_id: unlessNull(order.subscription_id),
    recurring_interval: unlessNull(order.subscription?.recurring_interval),
    recurring_interval_count: unlessNull(order.subscription?.recurring_interval_count),
  });
}

function subscriptionCanceled(s: Wire): Record<string, unknown> {
  return present({
    ...subscriptionBasics(s),
    customer_cancellation_reason: unlessNull(s.customer_cancellation_reason),
    customer_cancellation_comment: unlessNull(s.customer_cancellation_comment),
    // Ended without being set to cancel first (revoked at once): canceled now.
    canceled_at: s.canceled_at ?? s.ended_at,
    ends_at: unlessNull(s.ends_at),
    cancel_at_period_end: s.cancel_at_period_end,
  });
}

/** What a subscription.updated webhook means as Polar's system events: a renewal, a change of product, of discount. */
function subscriptionUpdated(s: Wire, previous: Wire | null | undefined, detail: Wire | undefined): Array<[string, Record<string, unknown>]> {
  if (!previous) return [];
  const events: Array<[string, Record<string, unknown>]> = [];
  const cycled = previous.current_period_start !== undefined && previous.current_period_start !== s.current_period_start && s.status !== 'canceled';
  if (cycled) events.push(['subscription.cycled', subscriptionBasics(s)]);
  const changes: Record<string, unknown> = {};
  if (previous.product_id !== undefined && previous.product_id !== s.product_id) {
    events.push(['subscription.product_updated', { subscription_id: s.id, old_product_id: previous.product_id, new_product_id: s.product_id }]);
    changes.product_id = s.product_id;
    if (detail?.proration_behavior) changes.proration_behavior = detail.proration_behavior;
  }
  // A discount that ran out at a renewal is not a change the seller or customer made (Polar sends nothing for it).
  if (!cycled && previous.discount_id !== undefined && previous.discount_id !== s.discount_id) changes.discount_id = s.discount_id ?? null;
  if (Object.keys(changes).length) events.push(['subscription.updated', { subscription_id: s.id, ...changes }]);
  return events;
}

const customerBasics = (c: Wire) => ({
  customer_id: c.id,
  customer_email: c.email ?? null,
  customer_name: c.name ?? null,
  // A deleted customer's external id is kept in its metadata (Polar's saved_external_id).
  customer_external_id: c.external_id ?? (typeof c.metadata?.__external_id === 'string' ? c.metadata.__external_id : null),
});

const taxIdValue = (taxId: unknown) => (Array.isArray(taxId) ? (taxId[0] ?? null) : (taxId ?? null));
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Polar's updated_fields: the new value of each of the fields it tracks that changed. */
function updatedFields(c: Wire, previous: Wire | null | undefined): Record<string, unknown> {
  if (!previous) return {};
  const fields: Record<string, unknown> = {};
  for (const key of ['name', 'billing_name', 'email', 'billing_address', 'metadata'] as const) {
    if (key in previous && !same(previous[key], c[key])) fields[key] = c[key] ?? null;
  }
  // The wire's billing_name falls back to the name; a billing name that only followed the name did not change.
  if (fields.billing_name !== undefined && previous.billing_name === previous.name && c.billing_name === c.name) delete fields.billing_name;
  if ('tax_id' in previous && !same(taxIdValue(previous.tax_id), taxIdValue(c.tax_id))) fields.tax_id = taxIdValue(c.tax_id);
  return fields;
}

const grantMetadata = (grant: Wire) => ({ benefit_id: grant.benefit_id, benefit_grant_id: grant.id, benefit_type: grant.benefit?.type });

/** The system events a webhook event stands for, with Polar's names and metadata (none for most types). */
export function lifecycleEventsOf(change: LifecycleChange): LifecycleEvent[] {
  const data = change.data as Wire;
  const previous = change.previous as Wire | null | undefined;
  const forCustomer = (name: string, metadata: Record<string, unknown>, at?: Date): LifecycleEvent => ({ name, ...customerOf(data), metadata, ...(at ? { at } : {}) });
  switch (change.type) {
    case 'order.paid':
      return [forCustomer('order.paid', orderPaid(data))];
    case 'order.refunded':
      return [forCustomer('order.refunded', { order_id: data.id, refunded_amount: data.refunded_amount, currency: data.currency })];
    case 'subscription.created':
      // Polar writes it only for a subscription that started (a checkout's, or a free one made through the API).
      if (!data.started_at) return [];
      return [forCustomer('subscription.created', { ...subscriptionBasics(data), started_at: data.started_at }, createdAt(data))];
    case 'subscription.updated':
      return subscriptionUpdated(data, previous, change.detail).map(([name, metadata]) => forCustomer(name, metadata));
    case 'subscription.canceled':
      return [forCustomer('subscription.canceled', subscriptionCanceled(data))];
    case 'subscription.uncanceled':
      return [forCustomer('subscription.uncanceled', subscriptionBasics(data))];
    case 'subscription.revoked':
      return [forCustomer('subscription.revoked', subscriptionBasics(data))];
    case 'subscription.past_due':
      return [forCustomer('subscription.past_due', { ...subscriptionBasics(data), past_due_at: data.past_due_at ?? data.modified_at })];
    case 'benefit_grant.created':
    case 'benefit_grant.updated':
      // Granted now (a first grant, or a pending one that went through), or changed while granted (Polar's
      // benefit.granted / benefit.updated); a grant still pending or failed has no event yet.
      if (!data.is_granted) return [];
      return [forCustomer(previous?.is_granted ? 'benefit.updated' : 'benefit.granted', grantMetadata(data))];
    case 'benefit_grant.cycled':
      return [forCustomer('benefit.cycled', grantMetadata(data))];
    case 'benefit_grant.revoked':
      return [forCustomer('benefit.revoked', grantMetadata(data))];
    case 'customer.created':
      return [{ name: 'customer.created', customerId: data.id, externalCustomerId: data.external_id ?? null, metadata: customerBasics(data), at: createdAt(data) }];
    case 'customer.updated':
      return [{ name: 'customer.updated', customerId: data.id, externalCustomerId: data.external_id ?? null, metadata: { ...customerBasics(data), updated_fields: updatedFields(data, previous) } }];
    case 'customer.deleted':
      return [{ name: 'customer.deleted', customerId: data.id, externalCustomerId: null, metadata: customerBasics(data) }];
    case 'checkout.created':
      // Polar's checkout event belongs to no customer, even when the checkout names one.
      return [{ name: 'checkout.created', customerId: null, externalCustomerId: null, metadata: present({ checkout_id: data.id, checkout_status: data.status, product_id: unlessNull(data.product_id) }) }];
    default:
      return [];
  }
}

/** Writes the system events of a webhook event, in the caller's transaction (one INSERT, none for most types). */
export async function recordLifecycleEvents(trx: Executor, organizationId: string, now: Date, change: LifecycleChange): Promise<void> {
  const events = lifecycleEventsOf(change);
  if (events.length === 0) return;
  const stored: StoredEvent[] = events.map((event) => ({
    id: newTimeOrderedId(),
    organizationId,
    name: event.name,
    source: 'system',
    timestamp: event.at ?? now,
    ingestedAt: now,
    customerId: event.customerId,
    externalCustomerId: event.externalCustomerId,
    externalId: null,
    parentId: null,
    // Polar's system metadata nests (customer.updated's updated_fields); meters read only user events' metadata.
    metadata: event.metadata as EventMetadata,
  }));
  await insertEvents(trx, stored);
}

const CUSTOMER_EVENTS = ['customer.created', 'customer.updated', 'customer.deleted'];

/**
 * A customer anonymized (deleted with anonymize, GDPR): its customer.* events copied its email, names and address
 * when they happened; they now carry the anonymized values, as the customer does. Till's choice: Polar leaves its
 * events as they were. `customer` is the anonymized customer as the API serializes it.
 */
export async function anonymizeLifecycleEvents(trx: Executor, customer: Wire): Promise<void> {
  for (const event of await systemEventsOfCustomer(trx, customer.organization_id, customer.id, CUSTOMER_EVENTS)) {
    const metadata: Wire = { ...event.metadata, customer_email: customer.email ?? null, customer_name: customer.name ?? null };
    const fields = metadata.updated_fields as Wire | undefined;
    if (fields && typeof fields === 'object') {
      const scrubbed: Wire = { ...fields };
      if ('email' in scrubbed) scrubbed.email = customer.email ?? null;
      if ('name' in scrubbed) scrubbed.name = customer.name ?? null;
      if ('billing_name' in scrubbed) scrubbed.billing_name = customer.billing_name ?? null;
      if ('billing_address' in scrubbed) scrubbed.billing_address = null;
      metadata.updated_fields = scrubbed;
    }
    await saveEventMetadata(trx, event.id, metadata);
  }
}
