import { Router, type Request, type Response } from 'express';
import { CoreError } from '../../core/errors.js';
import { eventSeq, eventsAfter, latestEvents, type SequencedEvent } from '../../core/webhooks/outbox.js';
import { eventHub } from '../../core/webhooks/stream.js';
import { renderPayload } from '../../core/webhooks/formats.js';
import type { V1Deps } from '../http/v1/deps.js';
import { resolvePrincipal } from '../http/v1/principal.js';
import { requireScope } from '../http/v1/route.js';

/** Scopes that let a caller follow an organization's events (the same ones that read its webhooks). */
export const LISTEN_SCOPES = ['webhooks:read', 'webhooks:write'] as const;
export const LISTEN_PATH = '/v1/cli/listen/:organization_id';

/** Most events a reconnecting client is sent to catch up; past that it is told it missed some. */
export const MAX_REPLAY = 10_000;
/** Most recent events a first connection may ask for with `?recent=`. */
export const MAX_RECENT = 1000;
/** Credentials are checked again every this many heartbeats (a minute with the default 15 s). */
const RECHECK_HEARTBEATS = 4;
/** What an EventSource waits before reconnecting, in ms. */
const RETRY_MS = 2000;

/** One SSE message. `data` is the webhook body exactly as a delivery sends it (JSON on one line). */
export const sseEvent = (event: SequencedEvent) => `id: ${event.id}\nevent: ${event.payload.type}\ndata: ${webhookBody(event)}\n\n`;

/** The raw-format webhook body, rendered as the delivery worker renders it, so both send the same bytes. */
const webhookBody = ({ payload }: SequencedEvent) => renderPayload('raw', payload, '');
const sseNotice = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * `GET /v1/cli/listen/{organization_id}` (the path Polar's CLI uses): server-sent events of the organization's
 * events as they commit. Each carries the event id as its SSE id, so a client reconnecting with `Last-Event-ID`
 * (or `?last_event_id=`) first gets everything after it that the outbox still holds. After any catch-up a
 * `ready` event says the stream is live; comment lines every heartbeat keep proxies from closing it.
 */
export function listenRouter(deps: V1Deps): Router {
  const router = Router();
  router.get(LISTEN_PATH, async (req, res, next) => {
    try {
      const principal = await resolvePrincipal(req, deps);
      const organizationId = String(req.params.organization_id);
      requireScope(principal, LISTEN_SCOPES, organizationId);
      const lastEventId = lastEventIdOf(req);
      await stream(req, res, deps, organizationId, lastEventId, recentOf(req));
    } catch (error) {
      next(error);
    }
  });
  return router;
}

function lastEventIdOf(req: Request): string | undefined {
  const header = req.headers['last-event-id'];
  const query = req.query.last_event_id;
  const value = (typeof header === 'string' ? header : undefined) ?? (typeof query === 'string' ? query : undefined);
  if (value === undefined || value.trim() === '') return undefined;
  if (value.length > 200) throw new CoreError('invalid', 'INVALID_LAST_EVENT_ID', 'Last-Event-ID is too long', [{ loc: ['header', 'last-event-id'], msg: 'At most 200 characters', type: 'string_too_long' }]);
  return value.trim();
}

/** `?recent=N`: how many of the organization's latest events a first connection wants before the live ones. */
function recentOf(req: Request): number {
  const value = req.query.recent;
  if (value === undefined) return 0;
  const count = typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(count <= MAX_RECENT)) {
    throw new CoreError('invalid', 'INVALID_RECENT', `recent must be a whole number from 0 to ${MAX_RECENT}`, [{ loc: ['query', 'recent'], msg: `A whole number from 0 to ${MAX_RECENT}`, type: 'value_error' }]);
  }
  return count;
}

async function stream(req: Request, res: Response, deps: V1Deps, organizationId: string, lastEventId: string | undefined, recent: number) {
  const hub = eventHub(deps.db);
  await hub.ready();
  // Where a reconnecting client left off; checked before the stream opens, so a bad id is still a plain error.
  const resumeSeq = lastEventId === undefined ? undefined : await eventSeq(deps.db, organizationId, lastEventId);

  let open = true;
  let live = false;
  const sent = new Set<number>();
  const held: SequencedEvent[] = [];
  let upTo = 0;
  const send = (event: SequencedEvent) => {
    if (!open) return;
    // Only a hole filled late can come both from the replay and from the hub; later events come once.
    if (event.seq <= upTo) {
      if (sent.has(event.seq)) return;
      sent.add(event.seq);
    }
    res.write(sseEvent(event));
  };
  const unsubscribe = hub.subscribe(
    organizationId,
    (event) => (live ? send(event) : held.push(event)),
    () => finish(),
  );
  upTo = hub.position();
  // Credentials are checked again every few heartbeats: a revoked token or a member removed stops receiving.
  let lastCheck = Date.now();
  const stillAllowed = async () => {
    try {
      requireScope(await resolvePrincipal(req, deps), LISTEN_SCOPES, organizationId);
    } catch {
      finish();
    }
  };
  const heartbeat = setInterval(() => {
    if (!open) return;
    res.write(': keep-alive\n\n');
    if (Date.now() - lastCheck >= RECHECK_HEARTBEATS * hub.settings.heartbeatMs) {
      lastCheck = Date.now();
      void stillAllowed();
    }
  }, hub.settings.heartbeatMs);
  heartbeat.unref();
  function finish() {
    if (!open) return;
    open = false;
    clearInterval(heartbeat);
    unsubscribe();
    res.end();
  }
  req.on('close', finish);
  res.on('error', finish);

  res.status(200);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache, no-transform');
  res.setHeader('connection', 'keep-alive');
  // nginx buffers responses unless told not to.
  res.setHeader('x-accel-buffering', 'no');
  res.flushHeaders();
  res.write(`retry: ${RETRY_MS}\n\n`);

  let replayed = 0;
  if (lastEventId !== undefined && resumeSeq === undefined) {
    res.write(sseNotice('gap', { last_event_id: lastEventId, message: 'That event is no longer held (or is not one of this organization): events before now may have been missed.' }));
  } else if (resumeSeq !== undefined) {
    let after = resumeSeq;
    while (open && replayed < MAX_REPLAY) {
      const batch = (await eventsAfter(deps.db, { afterSeq: after, organizationId, limit: 500 })).filter((event) => event.seq <= upTo);
      if (batch.length === 0) break;
      for (const event of batch) send(event);
      replayed += batch.length;
      after = batch[batch.length - 1].seq;
    }
    if (replayed >= MAX_REPLAY) res.write(sseNotice('gap', { last_event_id: lastEventId, message: `More than ${MAX_REPLAY} events were missed; only the first ${MAX_REPLAY} were sent.` }));
  } else if (recent > 0) {
    // A first connection's history: the latest events up to the hub's cursor (later ones are held, sent next).
    const history = await latestEvents(deps.db, { organizationId, upToSeq: upTo, limit: recent });
    for (const event of history) send(event);
    replayed = history.length;
  }
  if (!open) return;
  live = true;
  for (const event of held.splice(0)) send(event);
  res.write(sseNotice('ready', { organization_id: organizationId, replayed }));
}
