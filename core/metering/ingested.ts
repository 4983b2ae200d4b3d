import type { Executor } from '../db/database.js';
import { mergePartials, isPartialMeter, partialsOfEvents, type Partial } from './partials.js';
import { addUsage } from './usage.js';
import { addRollups, readyMeters, rollupRows, unknownCustomerKey } from './rollups.js';
import type { Meter, StoredEvent } from './schema.js';
import { organizationMeters } from './meters-repository.js';

/** Who an ingested batch touched: customers by id, and external ids no customer has (yet). */
export interface Touched {
  customerIds: string[];
  unknownExternalIds: string[];
}

/**
 * In the ingest's transaction, after its events are inserted: adds the batch's partials to each meter's figures
 * (every meter of the organization but unique ones, archived ones too so that unarchiving finds them whole), by
 * customer. An event sent with an external id counts for the customer holding that external id now; an event of
 * no known customer is left to the customer's creation (which rebuilds its figures from the events).
 */
export async function recordIngested(trx: Executor, organizationId: string, events: readonly StoredEvent[]): Promise<Touched> {
  const externals = [...new Set(events.flatMap((event) => (event.customerId === null && event.externalCustomerId !== null ? [event.externalCustomerId] : [])))];
  const byExternal = new Map<string, string>();
  if (externals.length) {
    for (const row of await trx('customers').where({ organization_id: organizationId }).whereIn('external_id', externals).whereNull('deleted_at').select('id', 'external_id')) {
      byExternal.set(String(row.external_id), String(row.id));
    }
  }
  const customerOf = (customerId: string | null, externalId: string | null) => customerId ?? (externalId === null ? undefined : byExternal.get(externalId));
  const touched = new Set<string>();
  for (const event of events) {
    const customer = customerOf(event.customerId, event.externalCustomerId);
    if (customer) touched.add(customer);
  }
  const unknownExternalIds = externals.filter((external) => !byExternal.has(external));
  if (events.length === 0) return { customerIds: [], unknownExternalIds };

  const meters: Meter[] = (await organizationMeters(trx, organizationId)).filter(isPartialMeter);
  const ready = await readyMeters(trx, meters.map((meter) => meter.id));
  const partials = await partialsOfEvents(trx, meters, events.map((event) => event.id));
  const usage = new Map<string, Map<string, Partial>>();
  const rollups = new Map<string, ReturnType<typeof rollupRows>>();
  for (const meter of meters) {
    const groups = partials.get(meter.id)!;
    const mine = new Map<string, Partial>();
    for (const group of groups) {
      const customer = customerOf(group.customerId, group.externalCustomerId);
      if (!customer) continue;
      const current = mine.get(customer);
      mine.set(customer, current ? mergePartials(current, group) : group);
    }
    usage.set(meter.id, mine);
    // A meter still being backfilled takes these events in with the rest (they come after its cursor).
    if (ready.has(meter.id)) rollups.set(meter.id, rollupRows(groups, (g) => customerOf(g.customerId, g.externalCustomerId) ?? unknownCustomerKey(g.externalCustomerId!)));
  }
  await addUsage(trx, organizationId, usage);
  await addRollups(trx, rollups);
  return { customerIds: [...touched], unknownExternalIds };
}
