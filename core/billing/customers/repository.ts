import type { Knex } from 'knex';
import { fromDbBool, fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import { dialectOf } from '../../db/database.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { Customer, CustomerFilter, CustomerKey } from './schema.js';
import { escapeLike, whereMetadata } from '../../db/sql.js';
import { BILLABLE_STATUSES } from '../subscriptions/schema.js';
import { read } from '../../db/read.js';
import { compiledRead } from '../../db/compiled-read.js';

type Executor = Knex | Knex.Transaction;
const TABLE = 'customers';

/** The unique indexes of migration 0004, named so a violation can be told apart on both dialects. */
export const EMAIL_INDEX = 'customers_organization_email_uidx';
export const EXTERNAL_ID_INDEX = 'customers_organization_external_id_uidx';

export function toCustomer(row: Record<string, unknown>): Customer {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    externalId: (row.external_id as string | null) ?? null,
    email: String(row.email),
    emailVerified: fromDbBool(row.email_verified),
    name: (row.name as string | null) ?? null,
    billingName: (row.billing_name as string | null) ?? null,
    billingAddress: row.billing_address === null ? null : fromDbJson(row.billing_address),
    taxId: row.tax_id === null ? null : fromDbJson(row.tax_id),
    locale: (row.locale as string | null) ?? null,
    metadata: fromDbJson(row.metadata),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
    deletedAt: fromDbTimeOrNull(row.deleted_at),
    firstUserEventAt: fromDbTimeOrNull(row.first_user_event_at),
  };
}

// email_lower carries the uniqueness (case-insensitive, and the same on both dialects, unlike SQL lower()).
const toRow = (customer: Customer) => ({
  organization_id: customer.organizationId,
  external_id: customer.externalId,
  email: customer.email,
  email_lower: customer.email.toLowerCase(),
  email_verified: customer.emailVerified,
  type: 'individual',
  name: customer.name,
  billing_name: customer.billingName,
  billing_address: customer.billingAddress ? toDbJson(customer.billingAddress) : null,
  tax_id: customer.taxId ? toDbJson(customer.taxId) : null,
  locale: customer.locale,
  metadata: toDbJson(customer.metadata),
  modified_at: toDbTimeOrNull(customer.modifiedAt),
  deleted_at: toDbTimeOrNull(customer.deletedAt),
});

/**
 * Customers by id, deleted ones included: what a customer bought (orders, subscriptions, keys) keeps showing who
 * bought it after the customer is deleted.
 */
export async function customersByIds(db: Executor, ids: readonly string[]): Promise<Map<string, Customer>> {
  if (ids.length === 0) return new Map();
  const rows = await db(TABLE).whereIn('id', [...new Set(ids)]);
  return new Map(rows.map((row) => [String(row.id), toCustomer(row)]));
}

export async function insertCustomer(trx: Executor, customer: Customer): Promise<void> {
  await trx(TABLE).insert({ id: customer.id, ...toRow(customer), created_at: toDbTime(customer.createdAt) });
  // Events may name the external id before the customer exists: the earliest of them is its first.
  if (customer.externalId) {
    const earliest = await trx('events').where({ organization_id: customer.organizationId, external_customer_id: customer.externalId, source: 'user' }).min('timestamp_ms as first').first();
    if (earliest?.first !== null && earliest?.first !== undefined) {
      const at = new Date(Number(earliest.first));
      await trx(TABLE).where({ id: customer.id }).update({ first_user_event_at: toDbTime(at) });
      customer.firstUserEventAt = at;
    }
  }
}

/** A live customer of an ingested batch: named by id or by external id by its events. */
export interface EventCustomerRow {
  id: string;
  external_id: string | null;
  first_user_event_at: unknown;
}

/** The live customers of the organization among `ids` or holding one of the `externalIds`, in id order. */
export async function eventCustomers(db: Executor, organizationId: string, ids: readonly string[], externalIds: readonly string[]): Promise<EventCustomerRow[]> {
  if (ids.length === 0 && externalIds.length === 0) return [];
  const rows = await db(TABLE)
    .where({ organization_id: organizationId })
    .where((q) => q.whereIn('id', ids).orWhereIn('external_id', externalIds))
    .whereNull('deleted_at')
    .orderBy('id')
    .select('id', 'external_id', 'first_user_event_at');
  return rows.map((row) => ({ id: String(row.id), external_id: row.external_id === null ? null : String(row.external_id), first_user_event_at: row.first_user_event_at }));
}

/**
 * Moves customers' first_user_event_at back to the earliest of the times given (an ingested batch), by customer id or
 * by external id. One read per batch; a write only for a customer whose first event this is. Answers the customers
 * whose first user events these are, found so under the write's row lock, and who have no external id (events sent
 * with an external id before it was theirs would count for them too): nothing of theirs was stored before, so the
 * batch's usage rows hold all of their events (core/metering/ingested.ts). `read`: the batch's customers, when the
 * caller read them already (eventCustomers, or with the ingest's first statement on PostgreSQL).
 */
export async function noteFirstUserEvents(
  trx: Executor,
  organizationId: string,
  events: readonly { customerId: string | null; externalCustomerId: string | null; timestamp: Date }[],
  read?: readonly EventCustomerRow[],
): Promise<Set<string>> {
  const first = new Set<string>();
  const byId = new Map<string, number>();
  const byExternal = new Map<string, number>();
  for (const event of events) {
    const [map, key] = event.customerId ? [byId, event.customerId] : [byExternal, event.externalCustomerId];
    if (key === null) continue;
    const at = event.timestamp.getTime();
    if (!map.has(key) || at < map.get(key)!) map.set(key, at);
  }
  if (!byId.size && !byExternal.size) return first;
  const rows = read ?? (await eventCustomers(trx, organizationId, [...byId.keys()], [...byExternal.keys()]));
  const earlier: { id: string; at: string; unset: boolean }[] = [];
  for (const row of rows) {
    if (!byId.has(row.id) && (row.external_id === null || !byExternal.has(row.external_id))) continue;
    const candidates = [byId.get(row.id), row.external_id === null ? undefined : byExternal.get(row.external_id)].filter((at): at is number => at !== undefined);
    const earliest = toDbTime(new Date(Math.min(...candidates)));
    const current = fromDbTimeOrNull(row.first_user_event_at);
    if (current && current.getTime() <= Date.parse(earliest)) continue;
    earlier.push({ id: row.id, at: earliest, unset: !current });
  }
  if (!earlier.length) return first;
  // In id order: two ingests updating the same customers (each the first events of some) lock them in one order.
  earlier.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  if (dialectOf(trx) === 'postgres') await trx.raw(`select 1 from ${TABLE} where id = any(?::text[]) order by id for update`, [earlier.map((row) => row.id)]);
  // Guarded: an ingest of the same customer that committed meanwhile (this waited for its lock) set it first.
  const unset = earlier.filter((row) => row.unset);
  const set = new Set<string>();
  for (const row of unset.length ? await setFirstUserEvents(trx, unset, 'c.first_user_event_at is null') : []) {
    set.add(row.id);
    if (row.external_id === null) first.add(row.id);
  }
  const later = earlier.filter((row) => !set.has(row.id));
  if (later.length) await setFirstUserEvents(trx, later, 'c.first_user_event_at > v.at');
  return first;
}

/** Sets first_user_event_at of the customers given where `condition` holds (c: the customer, v: the time given), in one statement; answers the customers updated. */
async function setFirstUserEvents(trx: Executor, rows: readonly { id: string; at: string }[], condition: string): Promise<{ id: string; external_id: string | null }[]> {
  const given =
    dialectOf(trx) === 'postgres'
      ? { sql: 'unnest(?::text[], ?::timestamptz[]) as v(id, at)', returning: 'c.id, c.external_id', bindings: [rows.map((row) => row.id), rows.map((row) => row.at)] }
      : // SQLite's RETURNING names the updated table's columns unqualified.
        { sql: "(select json_extract(value, '$[0]') as id, json_extract(value, '$[1]') as at from json_each(?)) as v", returning: 'id, external_id', bindings: [JSON.stringify(rows.map((row) => [row.id, row.at]))] };
  const result = await trx.raw(`update ${TABLE} as c set first_user_event_at = v.at from ${given.sql} where c.id = v.id and ${condition} returning ${given.returning}`, given.bindings as Knex.RawBinding[]);
  const updated: Record<string, unknown>[] = Array.isArray(result) ? result : result.rows;
  return updated.map((row) => ({ id: String(row.id), external_id: row.external_id === null ? null : String(row.external_id) }));
}

/**
 * Writes a live customer's fields; false when it is no longer live (deleted meanwhile), so a concurrent
 * delete wins over an update instead of being undone by it.
 */
export async function saveCustomer(trx: Executor, customer: Customer): Promise<boolean> {
  const count = await trx(TABLE).where({ id: customer.id }).whereNull('deleted_at').update(toRow(customer));
  return count > 0;
}

/**
 * Live (not deleted) customers of these organizations that the key names: one by id, possibly several by external id.
 * `forUpdate` locks the rows on PostgreSQL, so two concurrent updates apply one after the other instead of the second
 * overwriting the first with what it read before (SQLite has one writer at a time anyway).
 */
export async function findCustomers(
  db: Executor,
  key: CustomerKey,
  organizationIds: readonly string[],
  options: { forUpdate?: boolean; includeDeleted?: boolean } = {},
): Promise<Customer[]> {
  if ('id' in key && !options.forUpdate && !options.includeDeleted) return (await liveCustomerById(db, key.id, organizationIds)).map(toCustomer);
  const query = db(TABLE).whereIn('organization_id', organizationIds);
  // What a deleted customer bought still shows who bought it (a revoked license key, an order).
  if (!options.includeDeleted) query.whereNull('deleted_at');
  if ('id' in key) query.where({ id: key.id });
  else query.where({ external_id: key.externalId });
  if (options.forUpdate && dialectOf(db) === 'postgres') query.forUpdate();
  const rows = await read<Record<string, unknown>[]>(query.orderBy('id').limit(2));
  return rows.map(toCustomer);
}

/** findCustomers by id, without options (the customer state's read): built with knex once. */
const liveCustomerById = compiledRead<Record<string, unknown>[], [string, readonly string[]]>((db, id, organizationIds) =>
  db(TABLE).whereIn('organization_id', organizationIds).whereNull('deleted_at').where({ id }).orderBy('id').limit(2),
);

/** The live customers of an organization among these ids (a metering refresh run's), in id order. */
export async function liveCustomersOf(db: Executor, organizationId: string, ids: readonly string[]): Promise<Customer[]> {
  if (ids.length === 0) return [];
  return (await read<Record<string, unknown>[]>(db(TABLE).where({ organization_id: organizationId }).whereNull('deleted_at').whereIn('id', [...new Set(ids)]).orderBy('id'))).map(toCustomer);
}

/** The live customer of the organization with this email (case-insensitive), if any. */
export async function findCustomerByEmail(db: Executor, organizationId: string, email: string): Promise<Customer | undefined> {
  const row = await db(TABLE).where({ organization_id: organizationId, email_lower: email.toLowerCase() }).whereNull('deleted_at').first();
  return row ? toCustomer(row) : undefined;
}

/** Whether a live customer of the organization has this email (case-insensitive), other than `exceptId`. */
export async function isEmailTaken(db: Executor, organizationId: string, email: string, exceptId?: string): Promise<boolean> {
  const query = db(TABLE).where({ organization_id: organizationId, email_lower: email.toLowerCase() }).whereNull('deleted_at');
  if (exceptId) query.whereNot({ id: exceptId });
  return Boolean(await query.first('id'));
}

export async function isExternalIdTaken(db: Executor, organizationId: string, externalId: string): Promise<boolean> {
  return Boolean(await db(TABLE).where({ organization_id: organizationId, external_id: externalId }).whereNull('deleted_at').first('id'));
}

/** Which unique field a failed write collided on (`email`, `external_id`), or undefined for any other error. */
export function duplicateField(error: unknown): 'email' | 'external_id' | undefined {
  const { code, constraint, message } = (error ?? {}) as { code?: string; constraint?: string; message?: string };
  if (code !== '23505' && code !== 'SQLITE_CONSTRAINT_UNIQUE') return undefined;
  // PostgreSQL names the index; SQLite names the columns ("UNIQUE constraint failed: customers.organization_id, customers.email_lower").
  const text = `${constraint ?? ''} ${message ?? ''}`;
  if (text.includes(EMAIL_INDEX) || text.includes('customers.email_lower')) return 'email';
  if (text.includes(EXTERNAL_ID_INDEX) || text.includes('customers.external_id')) return 'external_id';
  return undefined;
}


function filtered(db: Executor, filter: CustomerFilter) {
  const query = db(TABLE).whereIn('customers.organization_id', filter.organizationIds).whereNull('customers.deleted_at');
  if (filter.email !== undefined) query.where('customers.email_lower', filter.email.toLowerCase());
  if (filter.query !== undefined) {
    const pattern = escapeLike(filter.query.toLowerCase());
    query.where((q) =>
      q
        .whereRaw(`customers.email_lower like ? escape '\\'`, [`%${pattern}%`])
        .orWhereRaw(`lower(customers.name) like ? escape '\\'`, [`%${pattern}%`])
        .orWhereRaw(`lower(customers.billing_name) like ? escape '\\'`, [`%${pattern}%`])
        .orWhereRaw(`lower(customers.external_id) like ? escape '\\'`, [`${pattern}%`]),
    );
  }
  if (filter.active !== undefined) {
    const holding = db('subscriptions').select(db.raw('1')).whereRaw('subscriptions.customer_id = customers.id').whereIn('subscriptions.status', BILLABLE_STATUSES);
    if (filter.active) query.whereExists(holding);
    else query.whereNotExists(holding);
  }
  whereMetadata(query, 'customers.metadata', dialectOf(db) === 'postgres', filter.metadata);
  return query;
}

const SORT_COLUMNS: Record<string, string> = { created_at: 'customers.created_at', email: 'customers.email_lower', name: 'customers.name' };

export async function listCustomers(db: Executor, filter: CustomerFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<Customer>> {
  const [{ count }] = await filtered(db, filter).count<{ count: number | string }[]>({ count: '*' });
  const query = filtered(db, filter).select('customers.*');
  for (const { column, order } of sorting) {
    const sortColumn = SORT_COLUMNS[column];
    if (!sortColumn) continue;
    // Customers without a name come last going up and first going down on both dialects, as on PostgreSQL.
    if (column === 'name') query.orderByRaw(`(${sortColumn} is null) ${order}`);
    query.orderBy(sortColumn, order);
  }
  const rows = await query.orderBy('customers.id').limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toCustomer), totalCount: Number(count) };
}
