import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { newId, toDbJson, toDbTime, fromDbJson, fromDbTime } from '../db/columns.js';

/** Event types of SPEC §3, announced through webhooks. */
export const WEBHOOK_EVENT_TYPES = [
  'benefit.created', 'benefit.updated',
  'benefit_grant.created', 'benefit_grant.updated', 'benefit_grant.revoked', 'benefit_grant.cycled',
  'checkout.created', 'checkout.updated',
  'order.created', 'order.updated', 'order.paid', 'order.refunded',
  'organization.updated',
  'product.created', 'product.updated',
  'refund.created', 'refund.updated',
  'subscription.created', 'subscription.active', 'subscription.canceled', 'subscription.revoked',
  'subscription.uncanceled', 'subscription.updated',
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

const TABLE = 'webhook_events';

/**
 * Records an event in the outbox. Call it with the transaction that makes the change it reports,
 * so the event exists exactly when the change does.
 */
export async function recordEvent(
  trx: Knex.Transaction,
  clock: Clock,
  event: { organizationId: string; type: WebhookEventType; data: unknown },
): Promise<OutboxEvent> {
  const now = clock.now();
  const payload: EventPayload = { type: event.type, timestamp: now.toISOString(), data: event.data };
  const id = newId();
  await trx(TABLE).insert({ id, organization_id: event.organizationId, type: event.type, payload: toDbJson(payload), created_at: toDbTime(now) });
  return { id, organizationId: event.organizationId, payload, createdAt: now };
}

/** An organization's outbox in the order events happened (tests, and delivery later). */
export async function listEvents(db: Knex, organizationId: string, options: { type?: WebhookEventType } = {}): Promise<OutboxEvent[]> {
  const rows = await db(TABLE)
    .where({ organization_id: organizationId, ...(options.type ? { type: options.type } : {}) })
    .orderBy([{ column: 'created_at' }, { column: 'seq' }]);
  return rows.map((row) => ({
    id: row.id,
    organizationId: row.organization_id,
    payload: fromDbJson<EventPayload>(row.payload),
    createdAt: fromDbTime(row.created_at),
  }));
}
