import { CURRENT_API_VERSION } from '../billing/shared/api-version.js';
import type { Clock } from '../clock.js';
import { newId } from '../db/columns.js';
import type { Database } from '../db/database.js';
import { CoreError } from '../errors.js';
import { organizationClock } from '../jobs/clock.js';
import type { Page, PageQuery } from '../billing/shared/pagination.js';
import { privateHostProblem } from './address.js';
import { renderPayload } from './formats.js';
import {
  endpointsOf,
  findEndpoint,
  findEndpointEvents,
  findOutboxEvent,
  insertEndpoint,
  listDeliveries as listDeliveryRows,
  listEndpoints as listEndpointRows,
  organizationNames,
  queueEndpointEvents,
  requeueEndpointEvent,
  saveEndpoint,
  skipPendingEvents,
  softDeleteEndpoint,
  type DeliveryFilter,
} from './repository.js';
import type { WebhookDelivery, WebhookEndpoint, WebhookEndpointCreate, WebhookEndpointUpdate } from './schema.js';
import { generateSecret } from './signing.js';

/** The organizations a caller may read webhooks in, and those it may also change them in. */
export interface Access {
  read: ReadonlySet<string>;
  write: ReadonlySet<string>;
}

export interface EndpointPolicy {
  /** TILL_WEBHOOKS_ALLOW_PRIVATE: URLs on loopback and private ranges are accepted. */
  allowPrivate: boolean;
}

const notFound = () => new CoreError('not_found', 'WEBHOOK_ENDPOINT_NOT_FOUND', 'Webhook endpoint not found');
const notPermitted = (what: string) => new CoreError('forbidden', 'NOT_PERMITTED', `You may read this webhook endpoint but not ${what} it`);
const invalidUrl = (message: string) => new CoreError('invalid', 'INVALID_WEBHOOK_URL', message, [{ loc: ['body', 'url'], msg: message, type: 'value_error' }]);

function checkUrl(url: string, policy: EndpointPolicy) {
  if (policy.allowPrivate) return;
  const problem = privateHostProblem(new URL(url));
  if (problem) throw invalidUrl(`${problem} Set TILL_WEBHOOKS_ALLOW_PRIVATE=1 on the daemon to allow it.`);
}

export async function listEndpoints(db: Database, organizationIds: readonly string[], page: PageQuery): Promise<Page<WebhookEndpoint>> {
  return listEndpointRows(db, organizationIds, page);
}

export async function getEndpoint(db: Database, readable: ReadonlySet<string>, id: string): Promise<WebhookEndpoint> {
  const found = await findEndpoint(db, id, [...readable]);
  if (!found) throw notFound();
  return found;
}

/** Creates an endpoint: it receives the events of its types that happen from now on, signed with its secret. */
export async function createEndpoint(db: Database, clock: Clock, organizationId: string, input: WebhookEndpointCreate, policy: EndpointPolicy): Promise<WebhookEndpoint> {
  checkUrl(input.url, policy);
  return db.transaction(async (trx) => {
    // The organization's clock: fan-out compares it with the events' times, which are on that clock too.
    const now = (await organizationClock(trx, clock, organizationId)).now();
    const endpoint: WebhookEndpoint = {
      id: newId(),
      organizationId,
      url: input.url,
      name: input.name || null,
      format: input.format,
      apiVersion: input.api_version ?? CURRENT_API_VERSION,
      secret: input.secret ?? generateSecret(),
      events: input.events,
      enabled: true,
      consecutiveFailures: 0,
      disabledAt: null,
      disabledReason: null,
      createdAt: now,
      modifiedAt: null,
    };
    await insertEndpoint(trx, endpoint);
    return endpoint;
  });
}

/** Loads an endpoint the caller may change, locked for the rest of the transaction on PostgreSQL. */
async function writableEndpoint(trx: Database, access: Access, id: string, what: string): Promise<WebhookEndpoint> {
  const current = await findEndpoint(trx, id, [...access.read], { forUpdate: true });
  if (!current) throw notFound();
  if (!access.write.has(current.organizationId)) throw notPermitted(what);
  return current;
}

/**
 * Updates an endpoint. Enabling a disabled one clears its run of failures (skipped events stay skipped until
 * redelivered); disabling one marks its pending events skipped.
 */
export async function updateEndpoint(db: Database, clock: Clock, access: Access, id: string, input: WebhookEndpointUpdate, policy: EndpointPolicy): Promise<WebhookEndpoint> {
  if (input.url) checkUrl(input.url, policy);
  return db.transaction(async (trx) => {
    const current = await writableEndpoint(trx, access, id, 'change');
    const now = clock.now();
    const enabled = input.enabled ?? current.enabled;
    const next: WebhookEndpoint = {
      ...current,
      url: input.url ?? current.url,
      name: input.name === undefined || input.name === null ? current.name : input.name || null,
      format: input.format ?? current.format,
      apiVersion: input.api_version ?? current.apiVersion,
      secret: input.secret ?? current.secret,
      events: input.events ?? current.events,
      enabled,
      ...(enabled && !current.enabled ? { consecutiveFailures: 0, disabledAt: null, disabledReason: null } : {}),
      ...(!enabled && current.enabled ? { disabledAt: now, disabledReason: 'Disabled through the API.' } : {}),
      modifiedAt: now,
    };
    await saveEndpoint(trx, next);
    if (!enabled && current.enabled) await skipPendingEvents(trx, id, now);
    return next;
  });
}

/** Replaces the signing secret with a new generated one; attempts from now on are signed with it. */
export async function resetEndpointSecret(db: Database, clock: Clock, access: Access, id: string): Promise<WebhookEndpoint> {
  return db.transaction(async (trx) => {
    const current = await writableEndpoint(trx, access, id, 'change');
    const next = { ...current, secret: generateSecret(), modifiedAt: clock.now() };
    await saveEndpoint(trx, next);
    return next;
  });
}

/** Deletes an endpoint (soft: its delivery history stays); its pending events are marked skipped. */
export async function deleteEndpoint(db: Database, clock: Clock, access: Access, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    await writableEndpoint(trx, access, id, 'delete');
    const now = clock.now();
    await softDeleteEndpoint(trx, id, now);
    await skipPendingEvents(trx, id, now);
  });
}

export async function listDeliveries(db: Database, filter: DeliveryFilter, page: PageQuery): Promise<Page<WebhookDelivery>> {
  return listDeliveryRows(db, filter, page);
}

/**
 * Sends an event again: to one endpoint (even one that did not get it the first time, if it is enabled), or
 * to every enabled endpoint that got it — or, if none did, to every enabled endpoint taking its type. Each
 * gets a fresh run of attempts, with the same `webhook-id` and body as before. Answers the endpoints queued.
 */
export async function redeliverEvent(db: Database, clock: Clock, access: Access, eventId: string, endpointId?: string): Promise<string[]> {
  return db.transaction(async (trx) => {
    const event = await findOutboxEvent(trx, eventId, [...access.read]);
    if (!event) throw new CoreError('not_found', 'WEBHOOK_EVENT_NOT_FOUND', 'Webhook event not found');
    if (!access.write.has(event.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this event but not redeliver it');
    const now = clock.now();
    let endpoints = (await endpointsOf(trx, [event.organizationId])).filter((e) => !endpointId || e.id === endpointId);
    if (endpointId) {
      if (!endpoints.length) throw notFound();
      if (!endpoints[0].enabled) {
        throw new CoreError('conflict', 'WEBHOOK_ENDPOINT_DISABLED', 'This webhook endpoint is disabled: enable it (PATCH enabled=true), then redeliver');
      }
    }
    endpoints = endpoints.filter((e) => e.enabled);
    const rows = await findEndpointEvents(trx, eventId, endpoints.map((e) => e.id));
    for (const row of rows) await requeueEndpointEvent(trx, row.rowId, now);
    const queued = new Set(rows.map((row) => row.endpointId));
    const missing = endpoints.filter((e) => !queued.has(e.id) && (endpointId ? true : rows.length === 0 && e.events.includes(event.type)));
    if (missing.length) {
      const names = await organizationNames(trx, [event.organizationId]);
      const name = names.get(event.organizationId) ?? event.organizationId;
      await queueEndpointEvents(trx, missing.map((e) => ({ endpointId: e.id, apiVersion: e.apiVersion, event, payload: renderPayload(e.format, event.payload, name), status: 'pending' as const })), now);
      for (const e of missing) queued.add(e.id);
    }
    if (!queued.size) throw new CoreError('not_found', 'NO_WEBHOOK_ENDPOINT', 'No enabled webhook endpoint takes this event');
    return [...queued];
  });
}
