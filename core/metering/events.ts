import type { Database, Executor } from '../db/database.js';
import { CoreError } from '../errors.js';
import { findCustomers } from '../billing/customers/repository.js';
import type { Customer } from '../billing/customers/schema.js';
import type { Page, PageQuery } from '../billing/shared/pagination.js';
import type { SortCriterion } from '../billing/shared/query.js';
import { childCounts, findEvent, listEventNames as listNameRows, listEvents as listRows, type EventFilter, type EventName } from './events-repository.js';
import { findMeter } from './meters-repository.js';
import type { Filter, StoredEvent } from './schema.js';

export interface EventView {
  event: StoredEvent;
  customer: Customer | null;
  childCount: number;
}

/** The customer of each event (by id, else by external id, which may name a customer created after the event). */
async function withCustomers(db: Executor, events: StoredEvent[]): Promise<EventView[]> {
  const byId = new Map<string, Customer | null>();
  const byExternal = new Map<string, Customer | null>();
  for (const event of events) {
    if (event.customerId && !byId.has(event.customerId)) {
      byId.set(event.customerId, (await findCustomers(db, { id: event.customerId }, [event.organizationId]))[0] ?? null);
    } else if (!event.customerId && event.externalCustomerId) {
      const key = `${event.organizationId}\u0000${event.externalCustomerId}`;
      if (!byExternal.has(key)) byExternal.set(key, (await findCustomers(db, { externalId: event.externalCustomerId }, [event.organizationId]))[0] ?? null);
    }
  }
  const children = await childCounts(db, events.map((event) => event.id));
  return events.map((event) => ({
    event,
    customer: event.customerId ? (byId.get(event.customerId) ?? null) : event.externalCustomerId ? (byExternal.get(`${event.organizationId}\u0000${event.externalCustomerId}`) ?? null) : null,
    childCount: children.get(event.id) ?? 0,
  }));
}

export async function getEvent(db: Database, readable: ReadonlySet<string>, id: string): Promise<EventView> {
  const event = await findEvent(db, id, [...readable]);
  if (!event) throw new CoreError('not_found', 'EVENT_NOT_FOUND', 'Event not found');
  return (await withCustomers(db, [event]))[0];
}

/**
 * GET /v1/events: `meter_id` reads the meter (of a readable organization) and keeps the user events it counts;
 * `filter` (a meter filter) does the same without a meter.
 */
export async function listEvents(
  db: Database,
  filter: Omit<EventFilter, 'meterFilter'> & { meterId?: string; filter?: Filter },
  sorting: readonly SortCriterion[],
  page: PageQuery,
): Promise<Page<EventView>> {
  const { meterId, filter: given, ...rest } = filter;
  let meterFilter: Filter | undefined = given;
  if (meterId) {
    const meter = await findMeter(db, meterId, filter.organizationIds);
    if (!meter) throw new CoreError('invalid', 'METER_NOT_FOUND', 'Meter not found', [{ loc: ['query', 'meter_id'], msg: 'Meter not found.', type: 'value_error' }]);
    // Both given: the events the meter counts that also match the filter.
    meterFilter = given ? { conjunction: 'and', clauses: [meter.filter, given] } : meter.filter;
  }
  const rows = await listRows(db, { ...rest, meterFilter }, sorting, page);
  return { items: await withCustomers(db, rows.items), totalCount: rows.totalCount };
}

export function listEventNames(db: Database, filter: EventFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<EventName>> {
  return listNameRows(db, filter, sorting, page);
}
