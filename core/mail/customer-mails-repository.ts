import { fromDbInt, fromDbJson, fromDbTime, toDbTime } from '../db/columns.js';
import type { Executor } from '../db/database.js';
import type { EventPayload } from '../webhooks/outbox.js';

export interface MailableEvent {
  seq: number;
  id: string;
  organizationId: string;
  payload: EventPayload;
  createdAt: Date;
}

/** The outbox position below which every event has been looked at. */
export async function mailFloor(db: Executor): Promise<number> {
  const row = await db('customer_mail_floor').where({ id: 1 }).first('seq');
  return row ? fromDbInt(row.seq) : 0;
}

/** Events of these types above the floor that have no customer mail row yet, oldest first. */
export async function unmailedEvents(db: Executor, types: readonly string[], floor: number, limit: number): Promise<MailableEvent[]> {
  const rows = await db('webhook_events as e')
    .leftJoin('customer_mails as m', 'm.event_id', 'e.id')
    .whereIn('e.type', types)
    .where('e.seq', '>', floor)
    .whereNull('m.event_id')
    .orderBy('e.seq')
    .limit(limit)
    .select('e.seq', 'e.id', 'e.organization_id', 'e.payload', 'e.created_at');
  return rows.map((row: Record<string, unknown>) => ({
    seq: fromDbInt(row.seq),
    id: String(row.id),
    organizationId: String(row.organization_id),
    payload: fromDbJson<EventPayload>(row.payload),
    createdAt: fromDbTime(row.created_at),
  }));
}

/** Marks the event's mail as handled; throws a unique violation when another daemon did first. */
export async function insertCustomerMail(trx: Executor, eventId: string, kind: string, at: Date): Promise<void> {
  await trx('customer_mails').insert({ event_id: eventId, kind, created_at: toDbTime(at) });
}

/**
 * Raises the floor past events written before `settledBefore` (no transaction still adding a lower position can be
 * that old) up to, not past, the oldest of them still without its mail row.
 */
export async function raiseMailFloor(db: Executor, types: readonly string[], settledBefore: Date): Promise<void> {
  const floor = await mailFloor(db);
  const settled = await db('webhook_events').where('created_at', '<', toDbTime(settledBefore)).where('seq', '>', floor).max({ seq: 'seq' }).first();
  if (settled?.seq === null || settled?.seq === undefined) return;
  const top = fromDbInt(settled.seq);
  const pending = await db('webhook_events as e')
    .leftJoin('customer_mails as m', 'm.event_id', 'e.id')
    .whereIn('e.type', types)
    .where('e.seq', '>', floor)
    .where('e.seq', '<=', top)
    .whereNull('m.event_id')
    .min({ seq: 'e.seq' })
    .first();
  const next = pending?.seq === null || pending?.seq === undefined ? top : fromDbInt(pending.seq) - 1;
  if (next > floor) await db('customer_mail_floor').where({ id: 1 }).where('seq', '<', next).update({ seq: next });
}
