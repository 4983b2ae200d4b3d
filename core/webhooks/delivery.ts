import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { dialectOf, type Database } from '../db/database.js';
import { renderPayload } from './formats.js';
import {
  countFailedEvent,
  disableEndpoint,
  endpointsOf,
  insertDelivery,
  lockUnfannedEvents,
  markFannedOut,
  organizationNames,
  queueEndpointEvents,
  recordSucceeded,
  resetFailures,
  settleEndpointEvent,
  skipPendingEvents,
  tryFanOutLock,
  type ClaimedDelivery,
} from './repository.js';
import type { SendResult } from './send.js';

/** Attempts per event before it counts as failed (the first send included). */
export const MAX_ATTEMPTS = 10;
/** Events in a row that failed every attempt before the endpoint is disabled. */
export const DISABLE_AFTER_FAILED_EVENTS = 10;
/** The longest wait between two attempts. */
export const MAX_RETRY_DELAY_MS = 20 * 60 * 1000;
export const DEFAULT_RETRY_BASE_MS = 2000;
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface DeliverySettings {
  /** Deliver to loopback, private and link-local addresses too (TILL_WEBHOOKS_ALLOW_PRIVATE=1). */
  allowPrivate: boolean;
  /** One attempt's time limit, connection to last byte (TILL_WEBHOOKS_TIMEOUT_MS, 10 s). */
  timeoutMs: number;
  /** The wait after the first failed attempt; it doubles per attempt (TILL_WEBHOOKS_RETRY_BASE_MS, 2 s). */
  retryBaseMs: number;
  /** The user-agent header of every request. */
  userAgent: string;
}

/**
 * The wait before attempt `attempt + 1` after attempt `attempt` failed: base × 2^(attempt−1), at most 20 minutes,
 * spread ±20 % so endpoints that failed together are not retried together. With the 2 s base: 2, 4, 8, 16, 32,
 * 64, 128, 256 and 512 s between the ten attempts (about 17 minutes in all).
 */
export function retryDelayMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const delay = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), MAX_RETRY_DELAY_MS);
  return Math.round(delay * (0.8 + 0.4 * random()));
}

/** Outbox events one fan-out takes at most. */
export const FAN_OUT_BATCH = 200;

/**
 * Copies outbox events to the endpoints that take them (live, subscribed to the type, created no later than
 * the event), rendering each body in the endpoint's format, and marks the events fanned out — all in one
 * transaction, so a crash leaves an event either untouched or fully queued. Answers how many events it took.
 */
export async function fanOutEvents(db: Database, clock: Clock, limit = FAN_OUT_BATCH): Promise<number> {
  return db.transaction((trx) => fanOutIn(trx, clock, limit));
}

/** fanOutEvents in a transaction the caller holds (the worker's one turn: fan-out, then claims). */
export async function fanOutIn(trx: Knex.Transaction, clock: Clock, limit = FAN_OUT_BATCH): Promise<number> {
  if (!(await tryFanOutLock(trx))) return 0;
  const events = await lockUnfannedEvents(trx, limit);
  if (!events.length) return 0;
  const organizationIds = [...new Set(events.map((e) => e.organizationId))];
  const endpoints = await endpointsOf(trx, organizationIds);
  const names = endpoints.length ? await organizationNames(trx, organizationIds) : new Map<string, string>();
  const now = clock.now();
  const items = events.flatMap((event) =>
    endpoints
      .filter((e) => e.organizationId === event.organizationId && e.events.includes(event.type) && e.createdAt.getTime() <= event.createdAt.getTime())
      .map((endpoint) => ({
        endpointId: endpoint.id,
        apiVersion: endpoint.apiVersion,
        event,
        payload: renderPayload(endpoint.format, event.payload, names.get(event.organizationId) ?? event.organizationId),
        status: endpoint.enabled ? ('pending' as const) : ('skipped' as const),
      })),
  );
  // Many rows at once would pass SQLite's bound-parameter limit; a few hundred per statement is safe.
  for (let i = 0; i < items.length; i += 50) await queueEndpointEvents(trx, items.slice(i, i + 50), now);
  await markFannedOut(trx, events.map((e) => e.seq), now.getTime());
  return events.length;
}

export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed' | 'disabled' | 'lost';

/** An attempt that was made and is to be recorded: the claim, what the endpoint answered, and when. */
export interface MadeAttempt {
  claimed: ClaimedDelivery;
  result: SendResult;
  at: Date;
}

/**
 * Records attempts made one after another to one endpoint (a claimed run) and moves their events on: succeeded;
 * pending again after the backoff; or failed after the last attempt, which lengthens the endpoint's run of failed
 * events and, at the limit, disables the endpoint and marks its pending events skipped. An attempt row is written
 * even when the claim was lost meanwhile (the request did go out); the event's state is then left to the claim's new
 * holder. All in one transaction, and the attempts that succeeded (a run's, up to the one that did not) in one
 * statement: on PostgreSQL a run of successes is that one statement alone, one commit for many deliveries. Answers
 * each attempt's outcome, in order.
 */
export async function recordAttempts(db: Database, made: readonly MadeAttempt[], settings: Pick<DeliverySettings, 'retryBaseMs'>): Promise<AttemptOutcome[]> {
  if (!made.length) return [];
  const firstFailed = made.findIndex((attempt) => !attempt.result.succeeded);
  const succeeded = firstFailed === -1 ? made : made.slice(0, firstFailed);
  const rest = firstFailed === -1 ? [] : made.slice(firstFailed);
  const write = async (trx: Database): Promise<AttemptOutcome[]> => {
    const settled = await recordSucceeded(
      trx,
      succeeded.map(({ claimed: { event, endpoint, token }, result, at }) => ({
        rowId: event.rowId,
        token,
        eventId: event.id,
        endpointId: endpoint.id,
        organizationId: event.organizationId,
        attempt: event.attempts + 1,
        httpCode: result.httpCode,
        response: result.response,
        durationMs: result.durationMs,
        at,
      })),
    );
    const outcomes: AttemptOutcome[] = succeeded.map(({ claimed }) => (settled.has(claimed.event.rowId) ? 'succeeded' : 'lost'));
    for (const attempt of rest) outcomes.push(await recordOne(trx, attempt, settings));
    return outcomes;
  };
  return !rest.length && dialectOf(db) === 'postgres' ? write(db) : db.transaction(write);
}

async function recordOne(trx: Database, { claimed, result, at: now }: MadeAttempt, settings: Pick<DeliverySettings, 'retryBaseMs'>): Promise<AttemptOutcome> {
  const { event, endpoint, token } = claimed;
  const attempts = event.attempts + 1;
  await insertDelivery(trx, {
    endpointId: endpoint.id,
    endpointEventId: event.rowId,
    eventId: event.id,
    organizationId: event.organizationId,
    attempt: attempts,
    succeeded: result.succeeded,
    httpCode: result.httpCode,
    response: result.response,
    durationMs: result.durationMs,
    createdAt: now,
  });
  const claim = { rowId: event.rowId, token };
  if (result.succeeded) {
    if (!(await settleEndpointEvent(trx, claim, { status: 'succeeded', attempts, nextAttemptAtMs: now.getTime(), lastHttpCode: result.httpCode, at: now }))) return 'lost';
    await resetFailures(trx, endpoint.id);
    return 'succeeded';
  }
  if (attempts < MAX_ATTEMPTS) {
    const next = now.getTime() + retryDelayMs(attempts, settings.retryBaseMs);
    return (await settleEndpointEvent(trx, claim, { status: 'pending', attempts, nextAttemptAtMs: next, lastHttpCode: result.httpCode, at: now })) ? 'retrying' : 'lost';
  }
  if (!(await settleEndpointEvent(trx, claim, { status: 'failed', attempts, nextAttemptAtMs: now.getTime(), lastHttpCode: result.httpCode, at: now }))) return 'lost';
  const run = await countFailedEvent(trx, endpoint.id);
  if (run < DISABLE_AFTER_FAILED_EVENTS) return 'failed';
  const reason = `Disabled after ${run} events in a row failed all ${MAX_ATTEMPTS} delivery attempts (last: ${result.httpCode ?? result.response ?? 'no answer'}). Pending events were marked skipped; fix the endpoint, enable it, then redeliver them.`;
  if (await disableEndpoint(trx, endpoint.id, reason.slice(0, 1000), now)) await skipPendingEvents(trx, endpoint.id, now);
  return 'disabled';
}

/**
 * How long a claim holds before another worker may take the attempt over (its holder died): twice one attempt's
 * time limit plus 5 s, room enough to send and record it.
 */
export const leaseMs = (settings: Pick<DeliverySettings, 'timeoutMs'>) => settings.timeoutMs * 2 + 5000;
