import { EventEmitter } from 'node:events';
import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { dialectOf, type Executor } from '../db/database.js';
import { newId, toDbJson, toDbTime, fromDbInt, fromDbJson, fromDbTime } from '../db/columns.js';
import { mapInSlices } from '../loop.js';
import { recordLifecycleEvents } from '../metering/lifecycle.js';

/** Event types of SPEC §3, announced through webhooks. */
export const WEBHOOK_EVENT_TYPES = [
  'benefit.created', 'benefit.updated',
  'benefit_grant.created', 'benefit_grant.updated', 'benefit_grant.revoked', 'benefit_grant.cycled',
  'checkout.created', 'checkout.updated', 'checkout.expired',
  'order.created', 'order.updated', 'order.paid', 'order.refunded',
  'organization.updated',
  'product.created', 'product.updated',
  'refund.created', 'refund.updated',
  'subscription.created', 'subscription.active', 'subscription.canceled', 'subscription.revoked',
  'subscription.uncanceled', 'subscription.updated', 'subscription.past_due',
  'customer.created', 'customer.updated', 'customer.deleted', 'customer.state_changed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The exact body a webhook delivers: `{type, timestamp, data}`, data as the API serializes it. */
export interface EventPayload {
  type: WebhookEventType;
  timestamp: string;
  data: unknown;
}

export interface OutboxEvent {
  id: string;
  organizationId: string;
  payload: EventPayload;
  createdAt: Date;
}

/** An outbox event with its position: `seq` grows with every insert (never reused), across organizations. */
export interface SequencedEvent extends OutboxEvent {
  seq: number;
}

const TABLE = 'webhook_events';

/** The PostgreSQL NOTIFY channel recordEvent signals on commit; every daemon's stream LISTENs to it. */
export const EVENTS_CHANNEL = 'till_events';

/**
 * In-process signal that an event was committed (SQLite, and the daemon that wrote it on PostgreSQL).
 * It carries the organization id only: listeners read the outbox, which is the truth.
 */
const committed = new EventEmitter().setMaxListeners(0);

/**
 * Calls `listener(organizationId)` after each transaction on `db` (this pool: other pools, like other daemons,
 * are heard through NOTIFY or the poll) that recorded an event commits.
 */
export function onEventCommitted(db: Executor, listener: (organizationId: string) => void): () => void {
  const source = db.client.config;
  const handler = (organizationId: string, from: unknown) => {
    if (from === source) listener(organizationId);
  };
  committed.on('event', handler);
  return () => committed.off('event', handler);
}

/**
 * Records an event in the outbox. Call it with the transaction that makes the change it reports,
 * so the event exists exactly when the change does. The lifecycle changes Polar also reports as system events
 * (order paid, subscription created, benefit granted, customer created…) get theirs here, in the same transaction;
 * `previous` (the changed object's fields before the change, wire names) tells what a subscription.updated,
 * customer.updated or benefit_grant.updated changed; `detail`, how it was made (a plan change's proration_behavior).
 */
export async function recordEvent(
  trx: Knex.Transaction,
  clock: Clock,
  event: { organizationId: string; type: WebhookEventType; data: unknown; previous?: Record<string, unknown> | null; detail?: Record<string, unknown> },
): Promise<OutboxEvent> {
  const now = clock.now();
  const { row, payload } = outboxRow(event.organizationId, event, now);
  await trx(TABLE).insert(row);
  // NOTIFY is transactional: other daemons hear it when (and only if) the change commits.
  if (dialectOf(trx) === 'postgres') await trx.raw('select pg_notify(?, ?)', [EVENTS_CHANNEL, event.organizationId]);
  announceOnCommit(trx, event.organizationId);
  await recordLifecycleEvents(trx, event.organizationId, now, event);
  return { id: row.id, organizationId: event.organizationId, payload, createdAt: now };
}

/**
 * recordEvent for several events of one organization in the same transaction (a metering refresh run announcing its
 * customers): one insert, in the order given (their `seq` follows it), and one NOTIFY, instead of two statements each.
 */
export async function recordEvents(
  trx: Knex.Transaction,
  clock: Clock,
  organizationId: string,
  events: readonly { type: WebhookEventType; data: unknown }[],
): Promise<void> {
  if (events.length === 0) return;
  const now = clock.now();
  // A refresh run announces up to 250 customers' states: their payloads are serialized a slice of the loop at a time.
  const rows = await mapInSlices(events, (event) => outboxRow(organizationId, event, now).row);
  // SQLite takes at most 999 bound values a statement (five a row here).
  for (let start = 0; start < rows.length; start += 150) await trx(TABLE).insert(rows.slice(start, start + 150));
  if (dialectOf(trx) === 'postgres') await trx.raw('select pg_notify(?, ?)', [EVENTS_CHANNEL, organizationId]);
  announceOnCommit(trx, organizationId);
  for (const event of events) await recordLifecycleEvents(trx, organizationId, now, event);
}

/** An event's outbox row, and its payload as the caller may answer it. */
function outboxRow(organizationId: string, event: { type: WebhookEventType; data: unknown }, now: Date) {
  const payload: EventPayload = { type: event.type, timestamp: now.toISOString(), data: event.data };
  return { payload, row: { id: newId(), organization_id: organizationId, type: event.type, payload: toDbJson(payload), created_at: toDbTime(now) } };
}

function announceOnCommit(trx: Executor, organizationId: string) {
  // A transaction's client shares its pool's config object: that names the pool the event was written through.
  const announce = () => committed.emit('event', organizationId, trx.client.config);
  const done = (trx as Partial<Knex.Transaction>).executionPromise;
  if (done) done.then(announce, () => {});
  else queueMicrotask(announce);
}

const toEvent = (row: Record<string, unknown>): SequencedEvent => ({
  seq: fromDbInt(row.seq),
  id: row.id as string,
  organizationId: row.organization_id as string,
  payload: fromDbJson<EventPayload>(row.payload),
  createdAt: fromDbTime(row.created_at),
});

/** An organization's outbox in the order events happened (tests, and delivery later). */
export async function listEvents(db: Executor, organizationId: string, options: { type?: WebhookEventType } = {}): Promise<OutboxEvent[]> {
  const rows = await db(TABLE)
    .where({ organization_id: organizationId, ...(options.type ? { type: options.type } : {}) })
    .orderBy([{ column: 'created_at' }, { column: 'seq' }]);
  return rows.map((row) => {
    const { seq: _seq, ...event } = toEvent(row);
    return event;
  });
}

/** Events after position `afterSeq` in insert order: of one organization, or of all (the stream's tracker). */
export async function eventsAfter(db: Executor, options: { afterSeq: number; organizationId?: string; limit: number }): Promise<SequencedEvent[]> {
  const query = db(TABLE).where('seq', '>', options.afterSeq).orderBy('seq').limit(options.limit);
  if (options.organizationId) query.andWhere('organization_id', options.organizationId);
  return (await query).map(toEvent);
}

/** An organization's newest `limit` events at or before position `upToSeq`, oldest first (a stream's history). */
export async function latestEvents(db: Executor, options: { organizationId: string; upToSeq: number; limit: number }): Promise<SequencedEvent[]> {
  const rows = await db(TABLE).where('organization_id', options.organizationId).andWhere('seq', '<=', options.upToSeq).orderBy('seq', 'desc').limit(options.limit);
  return rows.map(toEvent).reverse();
}

/** The events at these positions that exist now (a gap in `seq` that a slow transaction has since filled). */
export async function eventsAt(db: Executor, seqs: readonly number[]): Promise<SequencedEvent[]> {
  if (seqs.length === 0) return [];
  return (await db(TABLE).whereIn('seq', seqs).orderBy('seq')).map(toEvent);
}

/** The position of an organization's event by its id; undefined when the outbox no longer holds it. */
export async function eventSeq(db: Executor, organizationId: string, eventId: string): Promise<number | undefined> {
  const row = await db(TABLE).where({ id: eventId, organization_id: organizationId }).first('seq');
  return row ? fromDbInt(row.seq) : undefined;
}

/** The position of the newest event (0 for an empty outbox). */
export async function latestEventSeq(db: Executor): Promise<number> {
  const row = await db(TABLE).max({ seq: 'seq' }).first();
  return row?.seq === null || row?.seq === undefined ? 0 : fromDbInt(row.seq);
}

/** One event of an organization by id. */
export async function findEvent(db: Executor, organizationId: string, eventId: string): Promise<SequencedEvent | undefined> {
  const row = await db(TABLE).where({ id: eventId, organization_id: organizationId }).first();
  return row ? toEvent(row) : undefined;
}
