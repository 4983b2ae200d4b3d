import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { acceptDispute, createRefund, getDispute, getRefund, listDisputes, listRefunds, retrieveCharge, updateDispute } from './fake/after-payment.js';
import type { FakeContext } from './fake/context.js';
import { StripeFakeError, missing } from './fake/errors.js';
import { list, parseForm, type FormObject } from './fake/form.js';
import { stripeId, unixSeconds } from './fake/ids.js';
import {
  authenticate,
  cancelPaymentIntent,
  cancelSetupIntent,
  confirmPaymentIntent,
  confirmSetupIntent,
  createPaymentIntent,
  createSetupIntent,
  getPaymentIntent,
  getSetupIntent,
  updatePaymentIntent,
} from './fake/intents.js';
import {
  attachPaymentMethod,
  createConfirmationToken,
  createCustomer,
  createPaymentMethod,
  customerPaymentMethods,
  detachPaymentMethod,
  getConfirmationToken,
  getCustomer,
  getPaymentMethod,
  updateCustomer,
} from './fake/methods.js';
import { emptyState, type FakeState, type StripeEvent } from './fake/state.js';
import { createWebhookSender, type Delivery, type DeliveryOptions } from './fake/webhooks.js';

export { TEST_CARDS, TEST_IBANS, TEST_METHOD_IDS } from './fake/catalogue.js';

export interface StripeFakeOptions {
  secretKey?: string;
  publishableKey?: string;
  webhookSecret?: string;
  /** Where events are POSTed, signed; none: events are only recorded (GET /v1/events). */
  webhookUrl?: string;
  now?: () => Date;
  /** Each API call waits this long before answering (a slow processor, for crash tests). */
  latencyMs?: number;
  /**
   * Each API call waits this long after it took effect and before it answers: what it made is in the fake's state
   * while the caller still waits, the moment a crash test kills the caller (its charge made, its answer lost).
   */
  answerDelayMs?: number;
  /** Run Stripe's "some time later" changes by themselves after this delay; without it only advance() runs them. */
  laterAfterMs?: number;
}

/** One API call as the fake received it: the ledger a crash test checks charges against. */
export interface FakeCall {
  method: string;
  path: string;
  idempotencyKey: string | null;
  status: number;
  replayed: boolean;
  /** The object made or changed (pi_…, re_…), when the answer carried one. */
  objectId: string | null;
}

export interface StripeFake {
  url: string;
  secretKey: string;
  publishableKey: string;
  webhookSecret: string;
  /** `new Stripe(fake.secretKey, fake.clientOptions)` talks to the fake. */
  clientOptions: { host: string; port: number; protocol: 'http' };
  state: Readonly<FakeState>;
  calls: readonly FakeCall[];
  deliveries: readonly Delivery[];
  events: readonly StripeEvent[];
  setWebhookUrl(url: string | undefined): void;
  /** Runs every change Stripe would make later (debits settle, late refund failures, disputes close). */
  advance(): void;
  /** The customer on the 3-D Secure page of a PaymentIntent or SetupIntent. */
  authenticate(intentId: string, outcome: 'complete' | 'fail'): void;
  holdWebhooks(): void;
  releaseWebhooks(order?: 'as_created' | 'reversed'): Promise<void>;
  /** Waits until every event so far has been delivered (or given up on). */
  webhooksIdle(): Promise<void>;
  /** Sends an event again, as Stripe does on retries, or with a stale time or a missing or wrong signature. */
  redeliver(eventId: string, options?: DeliveryOptions): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

type Handler = (ctx: FakeContext, params: string[], form: FormObject, query: URLSearchParams) => unknown;
interface Route {
  method: 'GET' | 'POST';
  pattern: RegExp;
  handler: Handler;
  /** Stripe.js calls these from the buyer's browser with the publishable key. */
  publishable?: boolean;
}

const asList = (url: string, items: unknown[], query: URLSearchParams) => {
  const limit = Math.min(Math.max(Number(query.get('limit') ?? 10) || 10, 1), 100);
  return { object: 'list', data: items.slice(0, limit), has_more: items.length > limit, url };
};

const ROUTES: Route[] = [
  { method: 'POST', pattern: /^\/v1\/customers$/, handler: (ctx, _, form) => createCustomer(ctx, form) },
  { method: 'GET', pattern: /^\/v1\/customers\/([^/]+)$/, handler: (ctx, [id]) => getCustomer(ctx, id) },
  { method: 'POST', pattern: /^\/v1\/customers\/([^/]+)$/, handler: (ctx, [id], form) => updateCustomer(ctx, id, form) },
  {
    method: 'GET',
    pattern: /^\/v1\/customers\/([^/]+)\/payment_methods$/,
    handler: (ctx, [id], _, query) => asList(`/v1/customers/${id}/payment_methods`, customerPaymentMethods(ctx, id), query),
  },
  { method: 'POST', pattern: /^\/v1\/payment_methods$/, handler: (ctx, _, form) => createPaymentMethod(ctx, form), publishable: true },
  { method: 'GET', pattern: /^\/v1\/payment_methods\/([^/]+)$/, handler: (ctx, [id]) => getPaymentMethod(ctx, id, 'id') },
  {
    method: 'POST',
    pattern: /^\/v1\/payment_methods\/([^/]+)\/attach$/,
    handler: (ctx, [id], form) => {
      const customer = typeof form.customer === 'string' ? form.customer : '';
      if (!customer) throw new StripeFakeError(400, { type: 'invalid_request_error', code: 'parameter_missing', param: 'customer', message: 'Missing required param: customer.' });
      return attachPaymentMethod(ctx, id, customer);
    },
  },
  { method: 'POST', pattern: /^\/v1\/payment_methods\/([^/]+)\/detach$/, handler: (ctx, [id]) => detachPaymentMethod(ctx, id) },
  { method: 'POST', pattern: /^\/v1\/confirmation_tokens$/, handler: (ctx, _, form) => createConfirmationToken(ctx, form), publishable: true },
  { method: 'POST', pattern: /^\/v1\/test_helpers\/confirmation_tokens$/, handler: (ctx, _, form) => createConfirmationToken(ctx, form) },
  { method: 'GET', pattern: /^\/v1\/confirmation_tokens\/([^/]+)$/, handler: (ctx, [id]) => getConfirmationToken(ctx, id, 'id') },
  { method: 'POST', pattern: /^\/v1\/setup_intents$/, handler: (ctx, _, form) => createSetupIntent(ctx, form) },
  { method: 'GET', pattern: /^\/v1\/setup_intents\/([^/]+)$/, handler: (ctx, [id]) => getSetupIntent(ctx, id) },
  { method: 'POST', pattern: /^\/v1\/setup_intents\/([^/]+)\/confirm$/, handler: (ctx, [id], form) => confirmSetupIntent(ctx, id, form) },
  { method: 'POST', pattern: /^\/v1\/setup_intents\/([^/]+)\/cancel$/, handler: (ctx, [id], form) => cancelSetupIntent(ctx, id, form) },
  { method: 'POST', pattern: /^\/v1\/payment_intents$/, handler: (ctx, _, form) => createPaymentIntent(ctx, form) },
  {
    method: 'GET',
    pattern: /^\/v1\/payment_intents$/,
    handler: (ctx, _, __, query) => {
      const customer = query.get('customer');
      const items = [...ctx.state.paymentIntents.values()].filter((intent) => !customer || intent.customer === customer).sort((a, b) => b.created - a.created);
      return asList('/v1/payment_intents', items, query);
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/payment_intents\/search$/,
    handler: (ctx, _, __, query) => {
      // Stripe's search language, as far as Till uses it: one metadata clause, metadata['key']:'value'.
      const clause = /^metadata\['([^']+)'\]:'([^']*)'$/.exec((query.get('query') ?? '').trim());
      if (!clause) throw new StripeFakeError(400, { type: 'invalid_request_error', code: 'parameter_invalid_string', param: 'query', message: "This fake understands one clause: metadata['key']:'value'." });
      const items = [...ctx.state.paymentIntents.values()].filter((intent) => intent.metadata[clause[1]] === clause[2]).sort((a, b) => b.created - a.created);
      return { ...asList('/v1/payment_intents/search', items, query), object: 'search_result', next_page: null };
    },
  },
  { method: 'GET', pattern: /^\/v1\/payment_intents\/([^/]+)$/, handler: (ctx, [id]) => getPaymentIntent(ctx, id) },
  { method: 'POST', pattern: /^\/v1\/payment_intents\/([^/]+)$/, handler: (ctx, [id], form) => updatePaymentIntent(ctx, id, form) },
  { method: 'POST', pattern: /^\/v1\/payment_intents\/([^/]+)\/confirm$/, handler: (ctx, [id], form) => confirmPaymentIntent(ctx, id, form) },
  { method: 'POST', pattern: /^\/v1\/payment_intents\/([^/]+)\/cancel$/, handler: (ctx, [id], form) => cancelPaymentIntent(ctx, id, form) },
  { method: 'GET', pattern: /^\/v1\/charges\/([^/]+)$/, handler: (ctx, [id]) => retrieveCharge(ctx, id) },
  { method: 'POST', pattern: /^\/v1\/refunds$/, handler: (ctx, _, form) => createRefund(ctx, form) },
  { method: 'GET', pattern: /^\/v1\/refunds$/, handler: (ctx, _, __, query) => asList('/v1/refunds', listRefunds(ctx, query), query) },
  { method: 'GET', pattern: /^\/v1\/refunds\/([^/]+)$/, handler: (ctx, [id]) => getRefund(ctx, id) },
  { method: 'GET', pattern: /^\/v1\/disputes$/, handler: (ctx, _, __, query) => asList('/v1/disputes', listDisputes(ctx, query), query) },
  { method: 'GET', pattern: /^\/v1\/disputes\/([^/]+)$/, handler: (ctx, [id]) => getDispute(ctx, id) },
  { method: 'POST', pattern: /^\/v1\/disputes\/([^/]+)$/, handler: (ctx, [id], form) => updateDispute(ctx, id, form) },
  { method: 'POST', pattern: /^\/v1\/disputes\/([^/]+)\/close$/, handler: (ctx, [id]) => acceptDispute(ctx, id) },
  {
    method: 'GET',
    pattern: /^\/v1\/events\/([^/]+)$/,
    handler: (ctx, [id]) => {
      const event = ctx.state.events.find((item) => item.id === id);
      if (!event) throw missing('event', id);
      return event;
    },
  },
  { method: 'GET', pattern: /^\/v1\/events$/, handler: (ctx, _, __, query) => asList('/v1/events', [...ctx.state.events].reverse(), query) },
];

/** Replaces ids named in `expand[]` by the objects, as Stripe does (top-level fields only). */
function expand(state: FakeState, value: unknown, paths: string[]): unknown {
  if (paths.length === 0 || typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const tables: Record<string, Map<string, unknown>> = {
    ch_: state.charges,
    pm_: state.paymentMethods,
    cus: state.customers,
    pi_: state.paymentIntents,
    re_: state.refunds,
  };
  for (const path of paths) {
    const id = out[path];
    if (typeof id !== 'string') continue;
    const table = tables[id.slice(0, 3)];
    if (table?.has(id)) out[path] = table.get(id);
  }
  return out;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function apiKeyOf(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization ?? '';
  if (header.startsWith('Bearer ')) return header.slice(7).trim();
  if (header.startsWith('Basic ')) return Buffer.from(header.slice(6), 'base64').toString('utf8').split(':')[0];
  return undefined;
}

const redact = (key: string) => `${key.slice(0, 8)}${'*'.repeat(Math.max(key.length - 12, 4))}${key.slice(-4)}`;

const htmlEscape = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function authenticationPage(intentId: string, returnUrl: string): string {
  const form = (outcome: string, label: string) =>
    `<form method="post"><input type="hidden" name="outcome" value="${outcome}"><input type="hidden" name="return_url" value="${htmlEscape(returnUrl)}"><button type="submit">${label}</button></form>`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>3D Secure 2 Test Page</title></head><body>
<h1>3D Secure 2 Test Page</h1><p>This is a test authentication page for ${htmlEscape(intentId)}.</p>
${form('complete', 'Complete authentication')}${form('fail', 'Fail authentication')}</body></html>`;
}

/**
 * Starts an in-process, stateful stand-in for the parts of Stripe's API Till uses, on 127.0.0.1 and a free port.
 * It speaks Stripe's wire format (form-encoded requests, JSON objects and errors, Idempotency-Key replays), knows
 * Stripe's test payment methods, and POSTs Stripe-signed events to a webhook URL.
 */
export async function startStripeFake(options: StripeFakeOptions = {}): Promise<StripeFake> {
  const secretKey = options.secretKey ?? `sk_test_fake${stripeId('k').slice(2)}`;
  const publishableKey = options.publishableKey ?? `pk_test_fake${stripeId('k').slice(2)}`;
  const webhookSecret = options.webhookSecret ?? `whsec_${stripeId('w').slice(2)}`;
  const now = options.now ?? (() => new Date());
  const state = emptyState();
  const calls: FakeCall[] = [];
  const sender = createWebhookSender({ secret: webhookSecret, now });
  const idempotent = new Map<string, { fingerprint: string; status: number; body: string; at: number } | { fingerprint: string; inFlight: true }>();
  let request: { id: string; idempotencyKey: string | null } = { id: '', idempotencyKey: null };
  let laterTimer: NodeJS.Timeout | undefined;

  const ctx: FakeContext = {
    state,
    now,
    baseUrl: '',
    emit(type, object, previous) {
      const event: StripeEvent = {
        id: stripeId('evt'),
        object: 'event',
        api_version: '2026-10-28.endive',
        created: unixSeconds(now()),
        data: { object: structuredClone(object), ...(previous ? { previous_attributes: previous } : {}) },
        livemode: false,
        pending_webhooks: 1,
        request: { id: request.id || null, idempotency_key: request.idempotencyKey },
        type,
      };
      state.events.push(event);
      sender.enqueue(event);
    },
    later(change) {
      state.later.push(change);
      if (options.laterAfterMs !== undefined && !laterTimer) {
        laterTimer = setTimeout(() => {
          laterTimer = undefined;
          advance();
        }, options.laterAfterMs);
      }
    },
  };

  function advance() {
    request = { id: '', idempotencyKey: null };
    while (state.later.length > 0) state.later.shift()!();
  }

  async function handleApi(req: IncomingMessage, res: ServerResponse, url: URL, body: string): Promise<void> {
    const requestId = `req_${stripeId('r').slice(2, 16)}`;
    const idempotencyKey = req.method === 'POST' ? ((req.headers['idempotency-key'] as string | undefined) ?? null) : null;
    const send = (status: number, payload: string, replayed = false) => {
      res.writeHead(status, {
        'content-type': 'application/json',
        'request-id': requestId,
        'stripe-version': (req.headers['stripe-version'] as string | undefined) ?? '2026-10-28.endive',
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
        ...(status === 409 ? { 'stripe-should-retry': 'true' } : {}),
      });
      res.end(payload);
      let objectId: string | null = null;
      try {
        const parsed = JSON.parse(payload) as { id?: unknown; error?: { payment_intent?: { id?: unknown } } };
        objectId = typeof parsed.id === 'string' ? parsed.id : typeof parsed.error?.payment_intent?.id === 'string' ? parsed.error.payment_intent.id : null;
      } catch {
        objectId = null;
      }
      calls.push({ method: req.method ?? '', path: url.pathname, idempotencyKey, status, replayed, objectId });
    };
    const fail = (error: StripeFakeError) => send(error.status, JSON.stringify({ error: { ...error.body, request_log_url: `https://dashboard.stripe.com/test/logs/${requestId}` } }, null, 2));

    const key = apiKeyOf(req);
    if (!key) {
      return fail(new StripeFakeError(401, { type: 'invalid_request_error', message: 'You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. \'Authorization: Bearer YOUR_SECRET_KEY\').' }));
    }
    const route = ROUTES.find((candidate) => candidate.method === req.method && candidate.pattern.test(url.pathname));
    if (key !== secretKey && !(key === publishableKey && route?.publishable)) {
      if (key === publishableKey) return fail(new StripeFakeError(401, { type: 'invalid_request_error', message: 'This API call cannot be made with a publishable API key. Please use a secret API key. You can find a list of your API keys at https://dashboard.stripe.com/account/apikeys.' }));
      return fail(new StripeFakeError(401, { type: 'invalid_request_error', message: `Invalid API Key provided: ${redact(key)}` }));
    }
    if (!route) return fail(new StripeFakeError(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${url.pathname}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.` }));

    const storeKey = idempotencyKey ? `${key}:${idempotencyKey}` : undefined;
    const fingerprint = `${req.method} ${url.pathname} ${body}`;
    if (storeKey) {
      const seen = idempotent.get(storeKey);
      if (seen && 'inFlight' in seen) {
        return fail(new StripeFakeError(409, { type: 'idempotency_error', message: `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${idempotencyKey}. Please try again later.` }));
      }
      if (seen && seen.at > now().getTime() - 24 * 3600_000) {
        if (seen.fingerprint !== fingerprint) {
          return fail(new StripeFakeError(400, { type: 'idempotency_error', message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.` }));
        }
        return send(seen.status, seen.body, true);
      }
      idempotent.set(storeKey, { fingerprint, inFlight: true });
    }
    if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
    const form = req.method === 'POST' ? parseForm(body) : parseForm(url.search.slice(1));
    request = { id: requestId, idempotencyKey };
    let status = 200;
    let payload: string;
    let saved = true;
    try {
      const params = route.pattern.exec(url.pathname)!.slice(1).map(decodeURIComponent);
      const result = route.handler(ctx, params, form, url.searchParams);
      payload = JSON.stringify(expand(state, result, list(form, 'expand')), null, 2);
    } catch (error) {
      if (!(error instanceof StripeFakeError)) throw error;
      status = error.status;
      saved = error.saved;
      payload = JSON.stringify({ error: { ...error.body, request_log_url: `https://dashboard.stripe.com/test/logs/${requestId}` } }, null, 2);
    } finally {
      request = { id: '', idempotencyKey: null };
    }
    if (storeKey) {
      if (saved) idempotent.set(storeKey, { fingerprint, status, body: payload, at: now().getTime() });
      else idempotent.delete(storeKey);
    }
    if (options.answerDelayMs) await new Promise((resolve) => setTimeout(resolve, options.answerDelayMs));
    send(status, payload);
  }

  async function handleAuthentication(req: IncomingMessage, res: ServerResponse, url: URL, body: string): Promise<void> {
    const intentId = decodeURIComponent(url.pathname.slice('/_fake/3ds/'.length));
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(authenticationPage(intentId, url.searchParams.get('return_url') ?? ''));
      return;
    }
    const form = new URLSearchParams(body);
    try {
      const intent = authenticate(ctx, intentId, form.get('outcome') === 'complete' ? 'complete' : 'fail');
      const returnUrl = form.get('return_url');
      if (!returnUrl) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`Authentication ${intent.status === 'succeeded' ? 'completed' : 'failed'}; you can close this page.`);
        return;
      }
      const back = new URL(returnUrl);
      const kind = intent.object === 'payment_intent' ? 'payment_intent' : 'setup_intent';
      back.searchParams.set(kind, intent.id);
      back.searchParams.set(`${kind}_client_secret`, intent.client_secret);
      back.searchParams.set('redirect_status', intent.status === 'succeeded' ? 'succeeded' : 'failed');
      res.writeHead(303, { location: back.toString() });
      res.end();
    } catch (error) {
      if (!(error instanceof StripeFakeError)) throw error;
      res.writeHead(error.status, { 'content-type': 'text/plain' });
      res.end(error.message);
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    readBody(req)
      .then((body) => (url.pathname.startsWith('/_fake/3ds/') ? handleAuthentication(req, res, url, body) : handleApi(req, res, url, body)))
      .catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'api_error', message: String(error) } }));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  ctx.baseUrl = `http://127.0.0.1:${port}`;
  if (options.webhookUrl) sender.setUrl(options.webhookUrl);

  return {
    url: ctx.baseUrl,
    secretKey,
    publishableKey,
    webhookSecret,
    clientOptions: { host: '127.0.0.1', port, protocol: 'http' },
    state,
    calls,
    deliveries: sender.deliveries,
    events: state.events,
    setWebhookUrl: (url) => sender.setUrl(url),
    advance,
    authenticate: (intentId, outcome) => {
      authenticate(ctx, intentId, outcome);
    },
    holdWebhooks: () => sender.hold(),
    releaseWebhooks: (order) => sender.release(order),
    webhooksIdle: () => sender.idle(),
    redeliver: (eventId, deliveryOptions) => {
      const event = state.events.find((item) => item.id === eventId);
      if (!event) throw new Error(`no event ${eventId}`);
      return sender.post(event, deliveryOptions);
    },
    close: async () => {
      if (laterTimer) clearTimeout(laterTimer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
