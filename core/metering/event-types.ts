import { z } from 'zod';
import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { CoreError } from '../errors.js';
import type { Page, PageQuery } from '../billing/shared/pagination.js';
import type { SortCriterion } from '../billing/shared/query.js';
import { addMissingEventTypes, findEventType, listEventTypeStats, saveEventTypeLabel, type EventType, type EventTypeStats } from './event-types-repository.js';
import type { EventFilter } from './events-repository.js';
import { SYSTEM_LABELS } from './serialize.js';

export const EVENT_TYPE_SORTING = ['name', 'label', 'occurrences', 'first_seen', 'last_seen'] as const;

/** PATCH /v1/event-types/{id} (Polar's EventTypeUpdate): a label, and optionally where a dynamic label is read from. */
export const EventTypeUpdate = z.object({
  label: z
    .string()
    .min(1)
    .max(128)
    .transform((label) => label.trim())
    .refine((label) => label.length > 0, 'Label cannot be empty or only whitespace'),
  label_property_selector: z
    .string()
    .min(1)
    .max(256)
    .nullish()
    .transform((selector) => selector?.trim() || null),
});
export type EventTypeUpdate = z.infer<typeof EventTypeUpdate>;

/**
 * GET /v1/event-types/: the event names seen, per organization and source, with their labels and statistics. A user
 * event name gets its type (an id whose label can be changed) the first time it is listed; system events have none.
 */
export async function listEventTypes(db: Database, clock: Clock, filter: EventFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<EventTypeStats>> {
  await addMissingEventTypes(db, filter.organizationIds, clock.now());
  return listEventTypeStats(db, filter, filter.query, sorting, page);
}

/** The label an event name is shown with: a system event's own, else its type's, else the name. */
export const labelOf = (stats: EventTypeStats) => (stats.source === 'system' ? (SYSTEM_LABELS[stats.name] ?? stats.type?.label ?? stats.name) : (stats.type?.label ?? stats.name));

/** PATCH /v1/event-types/{id}: sets the label (and the selector, which is cleared when not given, as Polar does). */
export async function updateEventType(db: Database, clock: Clock, access: { read: ReadonlySet<string>; write: ReadonlySet<string> }, id: string, input: EventTypeUpdate): Promise<EventType> {
  return db.transaction(async (trx) => {
    const type = await findEventType(trx, id, access.read);
    if (!type) throw new CoreError('not_found', 'EVENT_TYPE_NOT_FOUND', 'Event type not found');
    if (!access.write.has(type.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this event type but not change it');
    const next = { ...type, label: input.label, labelPropertySelector: input.label_property_selector, modifiedAt: clock.now() };
    await saveEventTypeLabel(trx, next);
    return next;
  });
}

/** Polar's EventType. */
export function serializeEventType(type: EventType) {
  return {
    id: type.id,
    created_at: type.createdAt.toISOString(),
    modified_at: type.modifiedAt?.toISOString() ?? null,
    name: type.name,
    label: type.label,
    label_property_selector: type.labelPropertySelector,
    organization_id: type.organizationId,
  };
}

/** Polar's EventTypeWithStats: a system event name has no id nor timestamps of its own. */
export function serializeEventTypeWithStats(stats: EventTypeStats) {
  const type = stats.source === 'user' ? stats.type : null;
  return {
    id: type?.id ?? null,
    created_at: type?.createdAt.toISOString() ?? null,
    modified_at: type?.modifiedAt?.toISOString() ?? null,
    name: stats.name,
    label: labelOf(stats),
    label_property_selector: type?.labelPropertySelector ?? null,
    organization_id: stats.organizationId,
    source: stats.source,
    occurrences: stats.occurrences,
    first_seen: stats.firstSeen.toISOString(),
    last_seen: stats.lastSeen.toISOString(),
  };
}
