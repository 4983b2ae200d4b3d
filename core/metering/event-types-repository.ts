import type { Knex } from 'knex';
import { fromDbInt, fromDbTime, fromDbTimeOrNull, newId, toDbTime, toDbTimeOrNull } from '../db/columns.js';
import type { Executor } from '../db/database.js';
import { offsetOf, type Page, type PageQuery } from '../billing/shared/pagination.js';
import type { SortCriterion } from '../billing/shared/query.js';
import { applyFilter, type EventFilter } from './events-repository.js';
import { SYSTEM_EVENT_LABELS } from './lifecycle.js';

const TABLE = 'event_types';

export interface EventType {
  id: string;
  organizationId: string;
  name: string;
  label: string;
  labelPropertySelector: string | null;
  createdAt: Date;
  modifiedAt: Date | null;
}

/** An event name as listed: its type (none for system events), its source and how often and when it was seen. */
export interface EventTypeStats {
  organizationId: string;
  name: string;
  source: 'user' | 'system';
  type: EventType | null;
  occurrences: number;
  firstSeen: Date;
  lastSeen: Date;
}

function toEventType(row: Record<string, unknown>): EventType {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    name: String(row.name),
    label: String(row.label),
    labelPropertySelector: (row.label_property_selector as string | null) ?? null,
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

/** Gives every user event name of the organizations a type labelled with the name, if it has none yet. */
export async function addMissingEventTypes(db: Executor, organizationIds: readonly string[], at: Date): Promise<void> {
  const missing = await db('events as e')
    .leftJoin(`${TABLE} as t`, (join) => join.on('t.organization_id', 'e.organization_id').andOn('t.name', 'e.name'))
    .whereIn('e.organization_id', organizationIds)
    .where('e.source', 'user')
    .whereNull('t.id')
    .distinct('e.organization_id', 'e.name');
  if (missing.length === 0) return;
  const rows = missing.map((row) => ({ id: newId(), organization_id: row.organization_id, name: row.name, label: row.name, label_property_selector: null, created_at: toDbTime(at), modified_at: null }));
  // Another request may add the same names at the same moment: theirs stand.
  for (let i = 0; i < rows.length; i += 200) await db(TABLE).insert(rows.slice(i, i + 200)).onConflict(['organization_id', 'name']).ignore();
}

const SORT: Record<string, string> = { name: 'name', label: 'label', occurrences: 'occurrences', first_seen: 'first_seen', last_seen: 'last_seen' };

/** Event names grouped per organization and source, with their types; `query` matches the name or the label. */
export async function listEventTypeStats(db: Executor, filter: EventFilter, labelQuery: string | undefined, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<EventTypeStats>> {
  const grouped = () => {
    const query = db('events as e');
    applyFilter(db, query, { ...filter, query: undefined });
    return query
      .groupBy('e.organization_id', 'e.name', 'e.source')
      .select('e.organization_id as organization_id', 'e.name as name', 'e.source as source', db.raw('count(*) as occurrences'), db.raw('min(e.timestamp_ms) as first_seen'), db.raw('max(e.timestamp_ms) as last_seen'));
  };
  const joined = () => {
    const query = db
      .from(grouped().as('g'))
      .leftJoin(`${TABLE} as t`, (join) => join.on('t.organization_id', 'g.organization_id').andOn('t.name', 'g.name').andOnVal('g.source', '=', 'user'));
    if (labelQuery) {
      const pattern = `%${labelQuery.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      // A system name's label is Polar's (Order Paid), not a stored type's.
      const systemNames = Object.entries(SYSTEM_EVENT_LABELS).filter(([, label]) => label.toLowerCase().includes(labelQuery.toLowerCase())).map(([name]) => name);
      query.where((q: Knex.QueryBuilder) => {
        q.whereRaw("lower(g.name) like ? escape '\\'", [pattern]).orWhereRaw("lower(t.label) like ? escape '\\'", [pattern]);
        if (systemNames.length) q.orWhere((s: Knex.QueryBuilder) => s.where('g.source', 'system').whereIn('g.name', systemNames));
      });
    }
    return query;
  };
  const [{ count }] = await joined().count<{ count: number | string }[]>({ count: '*' });
  const query = joined().select('g.*', 't.id as type_id', 't.label as type_label', 't.label_property_selector as type_selector', 't.created_at as type_created_at', 't.modified_at as type_modified_at');
  for (const { column, order } of sorting) {
    if (column === 'label') query.orderByRaw(`coalesce(t.label, g.name) ${order === 'desc' ? 'desc' : 'asc'}`);
    else if (SORT[column]) query.orderBy(`g.${SORT[column]}`, order);
  }
  const rows = await query.orderBy('g.name').orderBy('g.source').orderBy('g.organization_id').limit(page.limit).offset(offsetOf(page));
  return {
    items: rows.map((row) => ({
      organizationId: String(row.organization_id),
      name: String(row.name),
      source: row.source === 'system' ? 'system' : 'user',
      type: row.type_id
        ? toEventType({ id: row.type_id, organization_id: row.organization_id, name: row.name, label: row.type_label, label_property_selector: row.type_selector, created_at: row.type_created_at, modified_at: row.type_modified_at })
        : null,
      occurrences: fromDbInt(row.occurrences),
      firstSeen: new Date(fromDbInt(row.first_seen)),
      lastSeen: new Date(fromDbInt(row.last_seen)),
    })),
    totalCount: Number(count),
  };
}

export async function findEventType(db: Executor, id: string, organizationIds: Iterable<string>): Promise<EventType | undefined> {
  const row = await db(TABLE).where({ id }).whereIn('organization_id', [...organizationIds]).first();
  return row ? toEventType(row) : undefined;
}

export async function saveEventTypeLabel(db: Executor, type: EventType): Promise<void> {
  await db(TABLE).where({ id: type.id }).update({ label: type.label, label_property_selector: type.labelPropertySelector, modified_at: toDbTimeOrNull(type.modifiedAt) });
}
