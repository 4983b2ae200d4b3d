import type { Clock } from '../clock.js';
import { newTimeOrderedId } from '../db/columns.js';
import { dialectOf, type Database } from '../db/database.js';
import { groupGate, type Grouping, type Outcome } from '../db/gate.js';
import { CoreError } from '../errors.js';
import { organizationClock } from '../jobs/clock.js';
import { eventCustomers, noteFirstUserEvents, type EventCustomerRow } from '../billing/customers/repository.js';
import { findEventKeys, insertEvents, insertEventsWithPartials } from './events-repository.js';
import { recordIngested, type PreparedPartials } from './ingested.js';
import { organizationMetersWithReadiness } from './meters-repository.js';
import { isPartialMeter } from './partials.js';
import { lockMetering } from './rollups.js';
import type { EventMetadata, StoredEvent } from './schema.js';
import type { Knex } from 'knex';

/**
 * Ingest transactions open at once per daemon; the others wait in line without a connection. SQLite has one
 * connection and one writer: queued in the pool, every client's batch came before the reads, jobs and webhook
 * deliveries behind it. PostgreSQL's pool has 10: ingests of the same customers wait on each other's row locks
 * anyway, and holding every connection while they did left reads waiting seconds for one (issue 21).
 */
const INGEST_TRANSACTIONS = { sqlite: 1, postgres: 3 } as const;

/**
 * Most events written in one ingest transaction when calls that waited are written together (a bigger call is
 * written alone). Each customer's usage rows, rollups and refresh job are written once a transaction, so a group
 * of calls over the same customers costs little more than one. Fewer on SQLite, whose one writer every other write
 * (refresh runs, webhook records, orders) waits for while an ingest holds it.
 */
const GROUP_EVENTS = { sqlite: 500, postgres: 2_000 } as const;

/** Largest batch one ingest call takes (Polar sets no count, only the 10 MiB body; this keeps a batch one transaction's worth). */
export const MAX_EVENTS_PER_BATCH = 10_000;
type Issue = { loc: (string | number)[]; msg: string; type: string };

const ISO_WITH_OFFSET = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One event of an ingest call, checked field by field (a hand-written check: zod per event costs a third of the ingest rate). */
interface ParsedEvent {
  index: number;
  name: string;
  timestamp: Date | null;
  customerId: string | null;
  externalCustomerId: string | null;
  externalId: string | null;
  parentId: string | null;
  organizationId: string | null;
  metadata: EventMetadata;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function optionalString(event: Record<string, unknown>, field: string, max: number, at: (string | number)[], issues: Issue[]): string | null {
  const value = event[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') issues.push({ loc: [...at, field], msg: 'Input should be a valid string', type: 'string_type' });
  else if (value.length === 0 || value.length > max) issues.push({ loc: [...at, field], msg: `String should have 1 to ${max} characters`, type: 'string_length' });
  else return value;
  return null;
}

function parseMetadata(value: unknown, at: (string | number)[], issues: Issue[]): EventMetadata {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) {
    issues.push({ loc: at, msg: 'Input should be a valid dictionary', type: 'dict_type' });
    return {};
  }
  const keys = Object.keys(value);
  if (keys.length > 50) issues.push({ loc: at, msg: 'At most 50 metadata keys', type: 'too_long' });
  for (const key of keys) {
    const item = value[key];
    if (key.length < 1 || key.length > 40) issues.push({ loc: [...at, key], msg: 'Metadata keys have 1 to 40 characters', type: 'string_length' });
    else if (typeof item === 'string' ? item.length > 500 : typeof item === 'number' ? !Number.isFinite(item) : typeof item !== 'boolean') {
      issues.push({ loc: [...at, key], msg: 'Metadata values are strings (up to 500 characters), numbers or booleans', type: 'value_error' });
    }
  }
  return value as EventMetadata;
}

function parseEvent(raw: unknown, index: number, issues: Issue[]): ParsedEvent | undefined {
  const at = ['body', 'events', index];
  if (!isRecord(raw)) {
    issues.push({ loc: at, msg: 'Input should be a valid dictionary', type: 'dict_type' });
    return undefined;
  }
  const before = issues.length;
  let name = '';
  if (typeof raw.name !== 'string') issues.push({ loc: [...at, 'name'], msg: raw.name === undefined ? 'Field required' : 'Input should be a valid string', type: raw.name === undefined ? 'missing' : 'string_type' });
  else if (raw.name.length < 1 || raw.name.length > 128) issues.push({ loc: [...at, 'name'], msg: 'String should have 1 to 128 characters', type: 'string_length' });
  else name = raw.name;

  let timestamp: Date | null = null;
  if (raw.timestamp !== undefined && raw.timestamp !== null) {
    const parsed = typeof raw.timestamp === 'string' && ISO_WITH_OFFSET.test(raw.timestamp) ? new Date(raw.timestamp) : undefined;
    if (!parsed || Number.isNaN(parsed.getTime()) || parsed.getUTCFullYear() < 1) {
      issues.push({ loc: [...at, 'timestamp'], msg: 'Input should be a valid datetime with a timezone offset', type: 'datetime_parsing' });
    } else timestamp = parsed;
  }

  const customerId = optionalString(raw, 'customer_id', 64, at, issues);
  if (customerId !== null && !UUID.test(customerId)) issues.push({ loc: [...at, 'customer_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
  const externalCustomerId = customerId === null ? optionalString(raw, 'external_customer_id', 512, at, issues) : null;
  if (customerId === null && externalCustomerId === null && issues.length === before) {
    issues.push({ loc: [...at, 'customer_id'], msg: 'Field required: customer_id or external_customer_id', type: 'missing' });
  }
  const event: ParsedEvent = {
    index,
    name,
    timestamp,
    customerId,
    externalCustomerId,
    externalId: optionalString(raw, 'external_id', 512, at, issues),
    parentId: optionalString(raw, 'parent_id', 512, at, issues),
    organizationId: optionalString(raw, 'organization_id', 64, at, issues),
    metadata: parseMetadata(raw.metadata, [...at, 'metadata'], issues),
  };
  return issues.length === before ? event : undefined;
}

export interface IngestResult {
  inserted: number;
  duplicates: number;
}

const invalid = (issues: Issue[]) => new CoreError('invalid', 'INVALID_EVENTS', `Invalid event at index ${issues[0].loc[2]}`, issues.slice(0, 20));

/**
 * POST /v1/events/ingest: checks every event first (one bad event refuses the whole batch, nothing is written),
 * then inserts the batch in one transaction, skipping events whose external_id the organization already has. Calls
 * that wait for a transaction are written together (ingestGate, writeBatches), each answered with its own counts.
 * `organizationOf` picks the organization from an event's own organization_id (a user may reach several).
 */
export async function ingestEvents(db: Database, clock: Clock, organizationOf: (requested: string | null) => string, body: unknown): Promise<IngestResult> {
  const batch = await checkIngest(db, clock, organizationOf, body);
  return batch ? ingestGate(db)(batch) : { inserted: 0, duplicates: 0 };
}

/** An ingest call's body checked (CoreError INVALID_EVENTS when it is refused): its batch, or undefined for no events. */
export async function checkIngest(db: Database, clock: Clock, organizationOf: (requested: string | null) => string, body: unknown): Promise<Batch | undefined> {
  if (!isRecord(body) || !Array.isArray(body.events)) {
    throw invalid([{ loc: ['body', 'events'], msg: 'Field required: a list of events', type: 'missing' }]);
  }
  const raw = body.events;
  if (raw.length > MAX_EVENTS_PER_BATCH) {
    throw invalid([{ loc: ['body', 'events'], msg: `At most ${MAX_EVENTS_PER_BATCH} events per call`, type: 'too_long' }]);
  }
  const issues: Issue[] = [];
  const parsed: ParsedEvent[] = [];
  for (let index = 0; index < raw.length; index++) {
    const event = parseEvent(raw[index], index, issues);
    if (event) parsed.push(event);
    if (issues.length >= 20) break;
  }
  if (issues.length) throw invalid(issues);
  if (parsed.length === 0) return undefined;

  const organizationId = organizationOf(parsed[0].organizationId);
  for (const event of parsed) {
    if (event.organizationId !== null && event.organizationId !== organizationId) {
      issues.push({ loc: ['body', 'events', event.index, 'organization_id'], msg: 'All events of a batch belong to one organization', type: 'value_error' });
    }
  }
  if (issues.length) throw invalid(issues);

  const now = (await organizationClock(db, clock, organizationId)).now();
  for (const event of parsed) {
    if (event.timestamp && event.timestamp.getTime() > now.getTime()) {
      issues.push({ loc: ['body', 'events', event.index, 'timestamp'], msg: 'Timestamp must be in the past.', type: 'value_error' });
    }
  }
  if (issues.length) throw invalid(issues);

  return { organizationId, parsed, now };
}

/** One call's events, checked, waiting to be written. */
export interface Batch {
  organizationId: string;
  parsed: ParsedEvent[];
  /** The organization's time when the call came (its events' ingested_at, and their timestamp when they have none). */
  now: Date;
}

/**
 * The ingest calls' gate: batches wait here for a transaction, at most INGEST_TRANSACTIONS at once, and the ones
 * that waited are written together, an organization's at a time, up to GROUP_EVENTS events (a bigger call alone).
 */
function ingestGate(db: Database): (batch: Batch) => Promise<IngestResult> {
  const dialect = dialectOf(db);
  return groupGate(db, 'metering.ingest', INGEST_TRANSACTIONS[dialect], GROUPING[dialect], (batches: Batch[]) => writeBatches(db, batches));
}

const byOrganization = (maxWeight: number): Grouping<Batch> => ({ key: (batch) => batch.organizationId, weight: (batch) => batch.parsed.length, maxWeight });
const GROUPING = { sqlite: byOrganization(GROUP_EVENTS.sqlite), postgres: byOrganization(GROUP_EVENTS.postgres) } as const;

/**
 * Writes batches of one organization in one transaction, as if one after the other: the events inserted in one
 * statement, each customer's usage rows, rollups and refresh job written once for all of them. A batch refused on
 * what only the transaction can check (a customer_id no customer has, a parent that does not exist) is left out
 * before anything is written, and refused alone; the others are written. Each batch is answered with its own counts.
 */
export async function writeBatches(db: Database, batches: Batch[]): Promise<Outcome<IngestResult>[]> {
  const organizationId = batches[0].organizationId;
  return db.transaction(async (trx) => {
    const all = batches.flatMap((batch) => batch.parsed);
    const customerIds = [...new Set(all.flatMap((event) => (event.customerId ? [event.customerId] : [])))];
    const externalIds = [...new Set(all.flatMap((event) => (event.customerId === null && event.externalCustomerId !== null ? [event.externalCustomerId] : [])))];
    // Before the events get their ids: a rollup backfill run waits for this ingest, or this ingest for it.
    const customers = await lockMeteringAndReadCustomers(trx, organizationId, customerIds, externalIds);
    const known = new Set(customers.map((customer) => customer.id));

    const ids = batches.map((batch) => batch.parsed.map(() => newTimeOrderedId()));
    // A parent is named by its id or its external_id: an event of the same batch, one already stored, or one of a
    // batch written before it in this transaction.
    const ownKeys = batches.map((batch, b) => {
      const keys = new Map<string, string>();
      batch.parsed.forEach((event, i) => {
        if (event.externalId) keys.set(event.externalId, ids[b][i]);
      });
      return keys;
    });
    const outside = [...new Set(batches.flatMap((batch, b) => batch.parsed.flatMap((event) => (event.parentId && !ownKeys[b].has(event.parentId) ? [event.parentId] : []))))];
    const stored = await findEventKeys(trx, organizationId, outside);
    const earlier = new Map<string, string>();

    const outcomes: (Outcome<IngestResult> | undefined)[] = [];
    const written: { batch: number; events: StoredEvent[] }[] = [];
    batches.forEach((batch, b) => {
      const issues: Issue[] = [];
      for (const event of batch.parsed) {
        if (event.customerId && !known.has(event.customerId)) {
          issues.push({ loc: ['body', 'events', event.index, 'customer_id'], msg: 'Customer does not exist.', type: 'customer_id' });
        }
      }
      const events: StoredEvent[] = batch.parsed.map((event, i) => {
        let parentId: string | null = null;
        if (event.parentId) {
          parentId = ownKeys[b].get(event.parentId) ?? stored.get(event.parentId) ?? earlier.get(event.parentId) ?? null;
          if (parentId === null || parentId === ids[b][i]) {
            issues.push({ loc: ['body', 'events', event.index, 'parent_id'], msg: 'Parent event does not exist.', type: 'value_error' });
          }
        }
        return {
          id: ids[b][i],
          organizationId,
          name: event.name,
          source: 'user',
          timestamp: event.timestamp ?? batch.now,
          ingestedAt: batch.now,
          customerId: event.customerId,
          externalCustomerId: event.externalCustomerId,
          externalId: event.externalId,
          parentId,
          metadata: event.metadata,
        };
      });
      if (issues.length) {
        outcomes[b] = { ok: false, error: invalid(issues) };
        return;
      }
      for (const [key, id] of ownKeys[b]) if (!earlier.has(key)) earlier.set(key, id);
      written.push({ batch: b, events });
    });
    const events = written.flatMap((batch) => batch.events);
    if (events.length) {
      // PostgreSQL: the meters (after the lock) first, then the events inserted and their partials in one statement.
      let prepared: PreparedPartials | undefined;
      let inserted: Set<string>;
      if (dialectOf(trx) === 'postgres') {
        const { meters, ready } = await organizationMetersWithReadiness(trx, organizationId);
        const partialMeters = meters.filter(isPartialMeter);
        const result = await insertEventsWithPartials(trx, events, partialMeters);
        inserted = new Set(result.inserted);
        prepared = { meters: partialMeters, ready, partials: result.partials };
      } else inserted = new Set(await insertEvents(trx, events));
      const fresh = inserted.size === events.length ? events : events.filter((event) => inserted.has(event.id));
      for (const { batch, events: own } of written) {
        const count = own.filter((event) => inserted.has(event.id)).length;
        outcomes[batch] = { ok: true, value: { inserted: count, duplicates: own.length - count } };
      }
      const firstEvents = await noteFirstUserEvents(trx, organizationId, events, customers);
      // The customers' refresh is due from the earliest of the calls.
      const dirtyAt = new Date(Math.min(...written.map(({ batch }) => batches[batch].now.getTime())));
      await recordIngested(trx, organizationId, fresh, dirtyAt, firstEvents, customers, prepared);
    }
    return outcomes as Outcome<IngestResult>[];
  });
}

/**
 * The ingest's first statement: the organization's metering lock taken shared (lockMetering) and the batch's live
 * customers read (eventCustomers: by id, and by external id for events sent without one), for the existence check,
 * first_user_event_at and the external ids' owners. On PostgreSQL one statement, the lock in the branch that runs
 * last: each statement of an ingest is a round trip to a daemon whose event loop is busy with the other clients,
 * and the ingest waited for those turns while holding its connection (pg_stat_activity under the latency bench:
 * mostly idle in transaction). SQLite has no lock to take.
 */
async function lockMeteringAndReadCustomers(trx: Knex.Transaction, organizationId: string, ids: readonly string[], externalIds: readonly string[]): Promise<EventCustomerRow[]> {
  if (dialectOf(trx) !== 'postgres') {
    await lockMetering(trx, organizationId, 'shared');
    return eventCustomers(trx, organizationId, ids, externalIds);
  }
  const whose = [ids.length ? 'id = any(?::text[])' : '', externalIds.length ? 'external_id = any(?::text[])' : ''].filter(Boolean).join(' or ') || 'false';
  const { rows } = (await trx.raw(
    `select id, external_id, first_user_event_at, null::int as locked from customers where organization_id = ? and deleted_at is null and (${whose}) ` +
      `union all select null, null, null, 1 from (select pg_advisory_xact_lock_shared(hashtext(?))) l`,
    [organizationId, ...(ids.length ? [ids] : []), ...(externalIds.length ? [externalIds] : []), `metering:${organizationId}`] as Knex.RawBinding[],
  )) as { rows: (EventCustomerRow & { locked: number | null })[] };
  return rows.filter((row) => row.locked === null).map(({ id, external_id, first_user_event_at }) => ({ id, external_id, first_user_event_at }));
}
