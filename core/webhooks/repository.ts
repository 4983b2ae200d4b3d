import type { ApiVersion } from '../billing/shared/api-version.js';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { dialectOf, type Executor } from '../db/database.js';
import { fromDbBool, fromDbInt, fromDbJson, fromDbTime, fromDbTimeOrNull, newId, toDbJson, toDbTime, toDbTimeOrNull } from '../db/columns.js';
import { escapeLike, runEachRowPrepared } from '../db/sql.js';
import { offsetOf, type Page, type PageQuery } from '../billing/shared/pagination.js';
import type { EventPayload, WebhookEventType } from './outbox.js';
import type { EndpointEvent, EndpointEventStatus, WebhookDelivery, WebhookEndpoint, WebhookFormat } from './schema.js';

const ENDPOINTS = 'webhook_endpoints';
const QUEUE = 'webhook_endpoint_events';
const DELIVERIES = 'webhook_deliveries';
const OUTBOX = 'webhook_events';

// ---------------------------------------------------------------------------------------------- endpoints

function toEndpoint(row: Record<string, unknown>): WebhookEndpoint {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    url: String(row.url),
    name: (row.name as string | null) ?? null,
    format: row.format as WebhookFormat,
    apiVersion: row.api_version as ApiVersion,
    secret: String(row.secret),
    events: fromDbJson<WebhookEventType[]>(row.events),
    enabled: fromDbBool(row.enabled),
    consecutiveFailures: fromDbInt(row.consecutive_failures),
    disabledAt: fromDbTimeOrNull(row.disabled_at),
    disabledReason: (row.disabled_reason as string | null) ?? null,
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

function endpointRow(endpoint: WebhookEndpoint) {
  return {
    url: endpoint.url,
    name: endpoint.name,
    format: endpoint.format,
    api_version: endpoint.apiVersion,
    secret: endpoint.secret,
    events: toDbJson(endpoint.events),
    enabled: endpoint.enabled,
    consecutive_failures: endpoint.consecutiveFailures,
    disabled_at: toDbTimeOrNull(endpoint.disabledAt),
    disabled_reason: endpoint.disabledReason,
    modified_at: toDbTimeOrNull(endpoint.modifiedAt),
  };
}

export async function insertEndpoint(trx: Executor, endpoint: WebhookEndpoint): Promise<void> {
  await trx(ENDPOINTS).insert({ ...endpointRow(endpoint), id: endpoint.id, organization_id: endpoint.organizationId, created_at: toDbTime(endpoint.createdAt) });
}

export async function saveEndpoint(trx: Executor, endpoint: WebhookEndpoint): Promise<void> {
  await trx(ENDPOINTS).where({ id: endpoint.id }).update(endpointRow(endpoint));
}

/** A live endpoint of one of the organizations; `forUpdate` locks its row on PostgreSQL for the transaction. */
export async function findEndpoint(db: Executor, id: string, organizationIds: readonly string[], options: { forUpdate?: boolean } = {}): Promise<WebhookEndpoint | undefined> {
  const query = db(ENDPOINTS).where({ id }).whereIn('organization_id', organizationIds).whereNull('deleted_at').first();
  if (options.forUpdate && dialectOf(db) === 'postgres') query.forUpdate();
  const row = await query;
  return row ? toEndpoint(row) : undefined;
}

export async function listEndpoints(db: Executor, organizationIds: readonly string[], page: PageQuery): Promise<Page<WebhookEndpoint>> {
  const scoped = () => db(ENDPOINTS).whereIn('organization_id', organizationIds).whereNull('deleted_at');
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const rows = await scoped().orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }]).limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toEndpoint), totalCount: Number(count) };
}

export async function softDeleteEndpoint(trx: Executor, id: string, at: Date): Promise<void> {
  await trx(ENDPOINTS).where({ id }).update({ deleted_at: toDbTime(at), enabled: false });
}

// ------------------------------------------------------------------------------------ events per endpoint

function toEndpointEvent(row: Record<string, unknown>): EndpointEvent {
  return {
    rowId: String(row.id),
    id: String(row.event_id),
    endpointId: String(row.endpoint_id),
    organizationId: String(row.organization_id),
    seq: fromDbInt(row.event_seq),
    type: row.type as WebhookEventType,
    apiVersion: row.api_version as ApiVersion,
    payload: String(row.payload),
    status: row.status as EndpointEventStatus,
    attempts: fromDbInt(row.attempts),
    nextAttemptAt: new Date(fromDbInt(row.next_attempt_at_ms)),
    lastHttpCode: row.last_http_code === null || row.last_http_code === undefined ? null : fromDbInt(row.last_http_code),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

/** An outbox event not yet copied to the endpoints that take it. */
export interface UnfannedEvent {
  seq: number;
  id: string;
  organizationId: string;
  type: WebhookEventType;
  payload: EventPayload;
  createdAt: Date;
}

/**
 * On PostgreSQL, the worker's own bookkeeping (a fan-out, a claim) commits without waiting for its WAL to reach the
 * disk (synchronous_commit off for that transaction alone; the server's setting and every other transaction, the
 * outbox event's and the recorded answers' included, are unchanged). A server crash can lose only the last such
 * commits, and losing one is harmless: a fan-out is redone from the outbox (its events are still unmarked), a claim
 * is simply not there, so the event goes out again, which at-least-once allows. Any later commit that waits for
 * the disk (an answer recorded) flushes the WAL before it, these included. It saves a flush (about 2 ms here) on
 * the way from a commit to its delivery, twice.
 */
const BOOKKEEPING_COMMIT = `set local synchronous_commit = off`;

/** An arbitrary constant naming the fan-out lock among daemons ("till" in ASCII). */
const FAN_OUT_LOCK = 0x7469_6c6c;

/**
 * On PostgreSQL, takes the fan-out lock for this transaction if no other daemon holds it (false: another daemon
 * is fanning out right now; it will copy these events). One fan-out at a time keeps each endpoint's queue in
 * event order. SQLite has one writer anyway.
 */
export async function tryFanOutLock(trx: Knex.Transaction): Promise<boolean> {
  if (dialectOf(trx) !== 'postgres') return true;
  // The commit need not wait for the disk (see BOOKKEEPING_COMMIT), asked for in the same round trip.
  const result = await trx.raw(`select pg_try_advisory_xact_lock(?) as locked, set_config('synchronous_commit', 'off', true)`, [FAN_OUT_LOCK]);
  return Boolean(result.rows[0]?.locked);
}

/**
 * The oldest outbox events not yet fanned out, locked for this transaction on PostgreSQL (SKIP LOCKED: two
 * daemons fan out disjoint batches).
 */
export async function lockUnfannedEvents(trx: Knex.Transaction, limit: number): Promise<UnfannedEvent[]> {
  const query = trx(OUTBOX).whereNull('fanned_out_at_ms').orderBy('seq').limit(limit);
  if (dialectOf(trx) === 'postgres') query.forUpdate().skipLocked();
  const rows = await query;
  return rows.map((row) => ({
    seq: fromDbInt(row.seq),
    id: String(row.id),
    organizationId: String(row.organization_id),
    type: row.type as WebhookEventType,
    payload: fromDbJson<EventPayload>(row.payload),
    createdAt: fromDbTime(row.created_at),
  }));
}

export async function markFannedOut(trx: Knex.Transaction, seqs: readonly number[], nowMs: number): Promise<void> {
  if (seqs.length) await trx(OUTBOX).whereIn('seq', seqs).update({ fanned_out_at_ms: nowMs });
}

/** Live endpoints of these organizations (enabled or not), for fan-out. */
export async function endpointsOf(trx: Executor, organizationIds: readonly string[]): Promise<WebhookEndpoint[]> {
  if (!organizationIds.length) return [];
  return (await trx(ENDPOINTS).whereIn('organization_id', organizationIds).whereNull('deleted_at')).map(toEndpoint);
}

export async function organizationNames(trx: Executor, organizationIds: readonly string[]): Promise<Map<string, string>> {
  if (!organizationIds.length) return new Map();
  const rows = await trx('organization').whereIn('id', organizationIds).select('id', 'name');
  return new Map(rows.map((row) => [String(row.id), String(row.name)]));
}

/** Queues events for endpoints; a pair already queued is left as it is (fan-out may be repeated after a crash). */
export async function queueEndpointEvents(
  trx: Executor,
  items: { endpointId: string; apiVersion: ApiVersion; event: UnfannedEvent; payload: string; status: 'pending' | 'skipped' }[],
  now: Date,
): Promise<void> {
  if (!items.length) return;
  await trx(QUEUE)
    .insert(
      items.map((item) => ({
        id: newId(),
        endpoint_id: item.endpointId,
        event_id: item.event.id,
        event_seq: item.event.seq,
        organization_id: item.event.organizationId,
        type: item.event.type,
        api_version: item.apiVersion,
        payload: item.payload,
        status: item.status,
        attempts: 0,
        next_attempt_at_ms: now.getTime(),
        last_http_code: null,
        locked_by: null,
        locked_until_ms: null,
        created_at: toDbTime(now),
        modified_at: null,
      })),
    )
    .onConflict(['endpoint_id', 'event_id'])
    .ignore();
}

/** A claimed attempt: the event, the endpoint it goes to, and the claim token that guards its outcome. */
export interface ClaimedDelivery {
  event: EndpointEvent;
  endpoint: WebhookEndpoint;
  token: string;
}

/**
 * Claims a run of due attempts of one endpoint, in event order. Its head is the earliest pending event of an enabled
 * endpoint (`endpointId`: of that endpoint only) when it is due and unclaimed, so each endpoint gets its events in
 * order, one at a time; of several endpoints', the head due first. After it come up to `max − 1` more pending events
 * of the same endpoint that are due and were never tried (a retrying event stops the run: its turn comes at its own
 * time). They share one claim token and lease; the caller sends them one after another and releases the rest when one
 * fails. Nobody else can take any of them meanwhile: the head is claimed, and the others are behind it in their
 * endpoint's queue. On PostgreSQL the head is taken FOR UPDATE SKIP LOCKED, so two daemons never claim the same
 * attempt; the claim then holds for `leaseMs`, after which a worker that died mid-send is replaced.
 *
 * The head is found endpoint by endpoint (each one's first pending event by the queue index), not by checking every
 * pending event for an earlier one: that was a probe per pending event, 2,000 probes a claim for a burst of 2,000.
 */
export async function claimDueRun(db: Knex, nowMs: number, leaseMs: number, max: number, endpointId?: string): Promise<ClaimedDelivery[]> {
  return db.transaction((trx) => claimDueRunIn(trx, nowMs, leaseMs, max, endpointId));
}

/** claimDueRun in a transaction the caller holds (the worker's one turn: fan-out, then claims): the claim holds once it commits. */
export async function claimDueRunIn(trx: Knex.Transaction, nowMs: number, leaseMs: number, max: number, endpointId?: string): Promise<ClaimedDelivery[]> {
  const pg = dialectOf(trx) === 'postgres';
  const heads = await trx.raw(
    `select q.* from ${ENDPOINTS} e
     join ${QUEUE} q on q.id = (select h.id from ${QUEUE} h where h.endpoint_id = e.id and h.status = 'pending' order by h.event_seq limit 1)
     where e.enabled = ${pg ? 'true' : '1'} and e.deleted_at is null${endpointId ? ' and e.id = ?' : ''}
       and q.next_attempt_at_ms <= ? and (q.locked_until_ms is null or q.locked_until_ms < ?)
     order by q.next_attempt_at_ms, q.event_seq
     limit 1${pg ? ' for update of q skip locked' : ''}`,
    [...(endpointId ? [endpointId] : []), nowMs, nowMs],
  );
  const head = (pg ? heads.rows : heads)[0] as Record<string, unknown> | undefined;
  if (!head) return [];
  // Only a claim writes: a transaction that found nothing commits nothing to flush.
  if (pg) await trx.raw(BOOKKEEPING_COMMIT);
  const rest =
    max > 1
      ? await trx(QUEUE)
          .where({ endpoint_id: head.endpoint_id, status: 'pending' })
          .where('event_seq', '>', head.event_seq as number)
          .orderBy('event_seq')
          .limit(max - 1)
      : [];
  // The run ends at the first event that is not simply waiting its turn (already tried, or held by a claim).
  const stop = rest.findIndex((row) => fromDbInt(row.attempts) > 0 || fromDbInt(row.next_attempt_at_ms) > nowMs || (row.locked_until_ms !== null && fromDbInt(row.locked_until_ms) >= nowMs));
  const rows = [head, ...(stop === -1 ? rest : rest.slice(0, stop))];
  const token = randomUUID();
  const ids = rows.map((row) => row.id as string);
  for (let i = 0; i < ids.length; i += 500) {
    await trx(QUEUE).whereIn('id', ids.slice(i, i + 500)).update({ locked_by: token, locked_until_ms: nowMs + leaseMs });
  }
  const endpoint = toEndpoint(await trx(ENDPOINTS).where({ id: head.endpoint_id }).first());
  return rows.map((row) => ({ event: toEndpointEvent(row), endpoint, token }));
}

/** Lets go of every claim (SQLite at start-up: one daemon per file, so a claim left behind is a dead one's). */
export async function releaseAllClaims(db: Executor): Promise<number> {
  return db(QUEUE).whereNotNull('locked_by').where({ status: 'pending' }).update({ locked_by: null, locked_until_ms: null });
}

/** Lets go of the untried rest of a claimed run (one of them failed, or the daemon is stopping). */
export async function releaseClaims(db: Executor, rowIds: readonly string[], token: string): Promise<void> {
  for (let i = 0; i < rowIds.length; i += 500) {
    await db(QUEUE).whereIn('id', rowIds.slice(i, i + 500)).where({ locked_by: token }).update({ locked_by: null, locked_until_ms: null });
  }
}

export async function insertDelivery(
  trx: Executor,
  delivery: { endpointId: string; endpointEventId: string; eventId: string; organizationId: string; attempt: number; succeeded: boolean; httpCode: number | null; response: string | null; durationMs: number; createdAt: Date },
): Promise<void> {
  await trx(DELIVERIES).insert({
    id: newId(),
    endpoint_id: delivery.endpointId,
    endpoint_event_id: delivery.endpointEventId,
    event_id: delivery.eventId,
    organization_id: delivery.organizationId,
    attempt: delivery.attempt,
    succeeded: delivery.succeeded,
    http_code: delivery.httpCode,
    response: delivery.response,
    duration_ms: delivery.durationMs,
    created_at: toDbTime(delivery.createdAt),
  });
}

/** An attempt that succeeded, to record: the claimed event's row, the claim's token, and what the endpoint answered. */
export interface SucceededAttempt {
  rowId: string;
  token: string;
  eventId: string;
  endpointId: string;
  organizationId: string;
  /** The event's attempts with this one. */
  attempt: number;
  httpCode: number | null;
  response: string | null;
  durationMs: number;
  at: Date;
}

/**
 * Records attempts that succeeded: a delivery row for each; each event settled as succeeded, guarded by its claim as
 * settleEndpointEvent is; the run of failed events of each endpoint that had one settled reset. Answers the rows
 * settled (the others' claims were lost meanwhile: their new holders settle them). On PostgreSQL one statement for
 * them all, atomic on its own (no transaction to open and commit around it); on SQLite, call it in a transaction.
 */
export async function recordSucceeded(trx: Executor, attempts: readonly SucceededAttempt[]): Promise<Set<string>> {
  if (!attempts.length) return new Set();
  const deliveryIds = attempts.map(() => newId());
  if (dialectOf(trx) === 'postgres') {
    const column = (pick: (a: SucceededAttempt) => unknown): Knex.Value => attempts.map(pick) as Knex.Value;
    const result = await trx.raw(
      `with v as (
         select * from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::int[], ?::int[], ?::text[], ?::int[], ?::timestamptz[], ?::bigint[])
           as v(delivery_id, row_id, token, event_id, endpoint_id, organization_id, attempt, http_code, response, duration_ms, at, at_ms)
       ), settled as (
         update ${QUEUE} q set status = 'succeeded', attempts = v.attempt, next_attempt_at_ms = v.at_ms, last_http_code = v.http_code,
           locked_by = null, locked_until_ms = null, modified_at = v.at
         from v where q.id = v.row_id and q.locked_by = v.token and q.status = 'pending'
         returning q.id, q.endpoint_id
       ), delivered as (
         insert into ${DELIVERIES} (id, endpoint_id, endpoint_event_id, event_id, organization_id, attempt, succeeded, http_code, response, duration_ms, created_at)
         select delivery_id, endpoint_id, row_id, event_id, organization_id, attempt, true, http_code, response, duration_ms, at from v
       ), reset as (
         update ${ENDPOINTS} set consecutive_failures = 0 where id in (select endpoint_id from settled) and consecutive_failures > 0
       )
       select id from settled`,
      [
        deliveryIds,
        column((a) => a.rowId),
        column((a) => a.token),
        column((a) => a.eventId),
        column((a) => a.endpointId),
        column((a) => a.organizationId),
        column((a) => a.attempt),
        column((a) => a.httpCode),
        column((a) => a.response),
        column((a) => a.durationMs),
        column((a) => a.at),
        column((a) => a.at.getTime()),
      ],
    );
    return new Set((result.rows as { id: string }[]).map((row) => row.id));
  }
  const deliveryRows = attempts.map((a, i) => [deliveryIds[i], a.endpointId, a.rowId, a.eventId, a.organizationId, a.attempt, 1, a.httpCode, a.response, a.durationMs, toDbTime(a.at)]);
  const settleRows = attempts.map((a) => [a.attempt, a.at.getTime(), a.httpCode, toDbTime(a.at), a.rowId, a.token]);
  const inserted = await runEachRowPrepared(
    trx,
    `insert into ${DELIVERIES} (id, endpoint_id, endpoint_event_id, event_id, organization_id, attempt, succeeded, http_code, response, duration_ms, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    deliveryRows,
  );
  let changes: number[];
  if (inserted) {
    changes = (await runEachRowPrepared(
      trx,
      `update ${QUEUE} set status = 'succeeded', attempts = ?, next_attempt_at_ms = ?, last_http_code = ?, locked_by = null, locked_until_ms = null, modified_at = ? where id = ? and locked_by = ? and status = 'pending'`,
      settleRows,
    ))!;
  } else {
    changes = [];
    for (const a of attempts) {
      await insertDelivery(trx, { endpointId: a.endpointId, endpointEventId: a.rowId, eventId: a.eventId, organizationId: a.organizationId, attempt: a.attempt, succeeded: true, httpCode: a.httpCode, response: a.response, durationMs: a.durationMs, createdAt: a.at });
      const settled = await settleEndpointEvent(trx, { rowId: a.rowId, token: a.token }, { status: 'succeeded', attempts: a.attempt, nextAttemptAtMs: a.at.getTime(), lastHttpCode: a.httpCode, at: a.at });
      changes.push(settled ? 1 : 0);
    }
  }
  const settled = attempts.filter((_, i) => changes[i]! > 0);
  for (const endpointId of new Set(settled.map((a) => a.endpointId))) await resetFailures(trx, endpointId);
  return new Set(settled.map((a) => a.rowId));
}

/**
 * Writes the outcome of a claimed attempt, guarded by the claim: false (and nothing written) when the claim
 * was lost meanwhile (its lease ran out and another worker took the event).
 */
export async function settleEndpointEvent(
  trx: Executor,
  claim: { rowId: string; token: string },
  outcome: { status: EndpointEventStatus; attempts: number; nextAttemptAtMs: number; lastHttpCode: number | null; at: Date },
): Promise<boolean> {
  const count = await trx(QUEUE)
    .where({ id: claim.rowId, locked_by: claim.token, status: 'pending' })
    .update({
      status: outcome.status,
      attempts: outcome.attempts,
      next_attempt_at_ms: outcome.nextAttemptAtMs,
      last_http_code: outcome.lastHttpCode,
      locked_by: null,
      locked_until_ms: null,
      modified_at: toDbTime(outcome.at),
    });
  return count > 0;
}

/** Adds one finally failed event to the endpoint's run and answers the run's length. */
export async function countFailedEvent(trx: Executor, endpointId: string): Promise<number> {
  await trx(ENDPOINTS).where({ id: endpointId }).update({ consecutive_failures: trx.raw('consecutive_failures + 1') });
  const row = await trx(ENDPOINTS).where({ id: endpointId }).first('consecutive_failures');
  return fromDbInt(row.consecutive_failures);
}

export async function resetFailures(trx: Executor, endpointId: string): Promise<void> {
  await trx(ENDPOINTS).where({ id: endpointId }).where('consecutive_failures', '>', 0).update({ consecutive_failures: 0 });
}

/** Disables an enabled endpoint (guarded: true only for the call that did it). */
export async function disableEndpoint(trx: Executor, endpointId: string, reason: string, at: Date): Promise<boolean> {
  const count = await trx(ENDPOINTS)
    .where({ id: endpointId, enabled: true })
    .whereNull('deleted_at')
    .update({ enabled: false, disabled_at: toDbTime(at), disabled_reason: reason, modified_at: toDbTime(at) });
  return count > 0;
}

/** Marks an endpoint's pending events skipped (it was disabled or deleted); they stay, to be redelivered. */
export async function skipPendingEvents(trx: Executor, endpointId: string, at: Date): Promise<number> {
  return trx(QUEUE)
    .where({ endpoint_id: endpointId, status: 'pending' })
    .update({ status: 'skipped', locked_by: null, locked_until_ms: null, modified_at: toDbTime(at) });
}

/** The rows of one event, for the endpoints given (all of them when `endpointIds` is undefined). */
export async function findEndpointEvents(db: Executor, eventId: string, endpointIds: readonly string[]): Promise<EndpointEvent[]> {
  if (!endpointIds.length) return [];
  return (await db(QUEUE).where({ event_id: eventId }).whereIn('endpoint_id', endpointIds)).map(toEndpointEvent);
}

/** Puts an event back in its endpoint's queue, due now, with a fresh run of attempts. */
export async function requeueEndpointEvent(trx: Executor, rowId: string, now: Date): Promise<void> {
  await trx(QUEUE).where({ id: rowId }).update({
    status: 'pending',
    attempts: 0,
    next_attempt_at_ms: now.getTime(),
    locked_by: null,
    locked_until_ms: null,
    modified_at: toDbTime(now),
  });
}

/** An outbox event by id, within these organizations. */
export async function findOutboxEvent(db: Executor, eventId: string, organizationIds: readonly string[]): Promise<UnfannedEvent | undefined> {
  if (!organizationIds.length) return undefined;
  const row = await db(OUTBOX).where({ id: eventId }).whereIn('organization_id', organizationIds).first();
  return row
    ? { seq: fromDbInt(row.seq), id: String(row.id), organizationId: String(row.organization_id), type: row.type as WebhookEventType, payload: fromDbJson<EventPayload>(row.payload), createdAt: fromDbTime(row.created_at) }
    : undefined;
}

// --------------------------------------------------------------------------------------------- deliveries

export interface DeliveryFilter {
  organizationIds: readonly string[];
  endpointIds?: readonly string[];
  start?: Date;
  end?: Date;
  succeeded?: boolean;
  query?: string;
  httpCodeClass?: '2xx' | '3xx' | '4xx' | '5xx';
  eventTypes?: readonly string[];
}

/** Attempts, newest first, each with the event it carried. */
export async function listDeliveries(db: Executor, filter: DeliveryFilter, page: PageQuery): Promise<Page<WebhookDelivery>> {
  const scoped = () => {
    const query = db(`${DELIVERIES} as d`).join(`${QUEUE} as q`, 'q.id', 'd.endpoint_event_id').whereIn('d.organization_id', filter.organizationIds);
    if (filter.endpointIds) query.whereIn('d.endpoint_id', filter.endpointIds);
    if (filter.start) query.where('d.created_at', '>=', toDbTime(filter.start));
    if (filter.end) query.where('d.created_at', '<=', toDbTime(filter.end));
    if (filter.succeeded !== undefined) query.where('d.succeeded', filter.succeeded);
    if (filter.httpCodeClass) {
      const floor = Number(filter.httpCodeClass[0]) * 100;
      query.where('d.http_code', '>=', floor).where('d.http_code', '<', floor + 100);
    }
    if (filter.eventTypes) query.whereIn('q.type', filter.eventTypes);
    if (filter.query) {
      const pattern = `%${escapeLike(filter.query.toLowerCase())}%`;
      query.where((q) =>
        q
          .whereRaw("lower(d.response) like ? escape '\\'", [pattern])
          .orWhereRaw("lower(q.payload) like ? escape '\\'", [pattern])
          .orWhere('d.event_id', filter.query!),
      );
    }
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const rows = await scoped()
    .select('d.*', 'q.id as q_id', 'q.event_id as q_event_id', 'q.endpoint_id as q_endpoint_id', 'q.organization_id as q_organization_id', 'q.event_seq', 'q.type', 'q.api_version', 'q.payload', 'q.status', 'q.attempts', 'q.next_attempt_at_ms', 'q.last_http_code', 'q.created_at as q_created_at', 'q.modified_at as q_modified_at')
    .orderBy([{ column: 'd.created_at', order: 'desc' }, { column: 'd.id', order: 'desc' }])
    .limit(page.limit)
    .offset(offsetOf(page));
  return {
    items: rows.map((row) => ({
      id: String(row.id),
      endpointId: String(row.endpoint_id),
      organizationId: String(row.organization_id),
      attempt: fromDbInt(row.attempt),
      succeeded: fromDbBool(row.succeeded),
      httpCode: row.http_code === null ? null : fromDbInt(row.http_code),
      response: row.response ?? null,
      durationMs: fromDbInt(row.duration_ms),
      createdAt: fromDbTime(row.created_at),
      event: toEndpointEvent({
        ...row,
        id: row.q_id,
        event_id: row.q_event_id,
        endpoint_id: row.q_endpoint_id,
        organization_id: row.q_organization_id,
        created_at: row.q_created_at,
        modified_at: row.q_modified_at,
      }),
    })),
    totalCount: Number(count),
  };
}

/** An endpoint's events in queue order (tests, and `till webhooks` views of what is waiting). */
export async function listEndpointEvents(db: Executor, endpointId: string): Promise<EndpointEvent[]> {
  return (await db(QUEUE).where({ endpoint_id: endpointId }).orderBy('event_seq')).map(toEndpointEvent);
}
