import { serializeCustomer, type CustomerWire } from '../billing/customers/serialize.js';
import type { Customer } from '../billing/customers/schema.js';
import type { EventName } from './events-repository.js';
import type { CustomerMeter, Meter, StoredEvent } from './schema.js';
import { SYSTEM_EVENT_LABELS } from './lifecycle.js';

/** The Meter of Polar's API (the one place its wire shape is written). */
export function serializeMeter(meter: Meter) {
  return {
    id: meter.id,
    created_at: meter.createdAt.toISOString(),
    modified_at: meter.modifiedAt?.toISOString() ?? null,
    metadata: meter.metadata,
    name: meter.name,
    unit: meter.unit,
    custom_label: meter.customLabel,
    custom_multiplier: meter.customMultiplier,
    filter: meter.filter,
    aggregation: meter.aggregation,
    organization_id: meter.organizationId,
    archived_at: meter.archivedAt?.toISOString() ?? null,
  };
}
export type MeterWire = ReturnType<typeof serializeMeter>;

/** Labels of system event names: Polar's (core/metering/lifecycle.ts). */
export const SYSTEM_LABELS = SYSTEM_EVENT_LABELS;

/**
 * An Event of Polar's API: a UserEvent, or a SystemEvent (meter.credited and meter.reset, whose metadata carries
 * the meter, and the lifecycle events of core/metering/lifecycle.ts). `customer` is the customer the event is for: by id, or matched later by external id.
 */
export function serializeEvent(event: StoredEvent, customer: Customer | null, childCount: number) {
  return {
    id: event.id,
    timestamp: event.timestamp.toISOString(),
    organization_id: event.organizationId,
    customer_id: event.customerId ?? customer?.id ?? null,
    customer: customer ? serializeCustomer(customer) : (null as CustomerWire | null),
    external_customer_id: event.externalCustomerId ?? customer?.externalId ?? null,
    child_count: childCount,
    parent_id: event.parentId,
    label: event.source === 'system' ? (SYSTEM_LABELS[event.name] ?? event.name) : event.name,
    name: event.name,
    source: event.source,
    metadata: event.metadata,
  };
}
export type EventWire = ReturnType<typeof serializeEvent>;

export function serializeEventName(name: EventName) {
  return {
    name: name.name,
    label: name.source === 'system' ? (SYSTEM_LABELS[name.name] ?? name.name) : name.name,
    source: name.source,
    occurrences: name.occurrences,
    first_seen: name.firstSeen.toISOString(),
    last_seen: name.lastSeen.toISOString(),
  };
}

/** A CustomerMeter of Polar's API, with its customer and meter. */
export function serializeCustomerMeter(customerMeter: CustomerMeter, customer: Customer, meter: Meter) {
  return {
    id: customerMeter.id,
    created_at: customerMeter.createdAt.toISOString(),
    modified_at: customerMeter.modifiedAt?.toISOString() ?? null,
    customer_id: customerMeter.customerId,
    meter_id: customerMeter.meterId,
    consumed_units: customerMeter.consumedUnits,
    credited_units: customerMeter.creditedUnits,
    balance: customerMeter.balance,
    customer: serializeCustomer(customer),
    meter: serializeMeter(meter),
  };
}

/** The meter entry of a customer's state (active_meters). */
export function serializeCustomerStateMeter(customerMeter: CustomerMeter) {
  return {
    id: customerMeter.id,
    created_at: customerMeter.createdAt.toISOString(),
    modified_at: customerMeter.modifiedAt?.toISOString() ?? null,
    meter_id: customerMeter.meterId,
    consumed_units: customerMeter.consumedUnits,
    credited_units: customerMeter.creditedUnits,
    balance: customerMeter.balance,
  };
}
