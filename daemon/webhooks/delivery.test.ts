import { validateEvent } from '@polar-sh/sdk/webhooks.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEndpointEvents } from '../../core/webhooks/repository.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startReceiver, type Received, type Receiver } from './receiver.js';

// The delivery worker of a real daemon, sending to a real HTTP receiver on 127.0.0.1 (allowed here), with
// retries a millisecond apart and a short attempt timeout so the whole schedule runs in seconds.
let daemon: TestDaemon;
let owner: SignedIn;
let receiver: Receiver;

const sdk = () => polarSdk(daemon.url, owner.token);
const v1 = (method: string, path: string, body?: unknown) => v1Request(daemon.url, owner.token, method, path, body);

beforeAll(async () => {
  daemon = await startTestDaemon({ TILL_WEBHOOKS_ALLOW_PRIVATE: '1', TILL_WEBHOOKS_RETRY_BASE_MS: '1', TILL_WEBHOOKS_POLL_MS: '20', TILL_WEBHOOKS_TIMEOUT_MS: '500' });
  owner = await signUp(daemon.url, { name: 'Della Delivery' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await daemon?.close();
  await receiver?.close();
});

/** A fresh organization with one endpoint at `path` on the receiver. */
async function endpointAt(path: string, events: string[], extra: Record<string, unknown> = {}) {
  const organizationId = await createOrganization(owner, `Org ${path}`);
  const res = await v1('POST', '/webhooks/endpoints', { url: `${receiver.url}${path}`, format: 'raw', events, organization_id: organizationId, ...extra });
  expect(res.status).toBe(201);
  return { organizationId, endpoint: await res.json() };
}

const createCustomer = (organizationId: string, name = 'Ada') => sdk().customers.create({ email: `c-${Math.random().toString(36).slice(2)}@example.com`, name, organizationId });
const at = (path: string) => (received: Received[]) => received.filter((r) => r.path === path);
const header = (value: string | string[] | undefined) => String(value);

describe('webhook delivery', () => {
  it("delivers a signed event that Polar's SDK and the standardwebhooks verifier both accept", async () => {
    const { organizationId, endpoint } = await endpointAt('/signed', ['customer.created']);
    const customer = await createCustomer(organizationId);
    const [request] = at('/signed')(await receiver.waitFor((r) => at('/signed')(r).length >= 1));
    const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, header(request.headers[h])]));
    const event = validateEvent(request.body, headers, endpoint.secret);
    expect(event).toMatchObject({ type: 'customer.created', data: { id: customer.id, email: customer.email } });
    expect(new Webhook(Buffer.from(endpoint.secret).toString('base64')).verify(request.body, headers)).toMatchObject({ type: 'customer.created' });
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toMatch(/^till-webhooks\//);
    const [outbox] = await daemon.db('webhook_events').where({ organization_id: organizationId, type: 'customer.created' });
    expect(headers['webhook-id']).toBe(outbox.id);

    await receiver.waitFor(() => true);
    const deliveries = await sdk().webhooks.listWebhookDeliveries({ endpointId: endpoint.id });
    expect(deliveries.result.items).toHaveLength(1);
    expect(deliveries.result.items[0]).toMatchObject({ succeeded: true, httpCode: 200, response: 'ok', webhookEvent: { id: outbox.id, type: 'customer.created', succeeded: true, skipped: false, payload: request.body, isArchived: false } });
  });

  it('writes an endpoint\'s events in the Polar-Version it asked for, and keeps that version on each delivered event', async () => {
    const { organizationId, endpoint } = await endpointAt('/versioned', ['customer.created'], { api_version: '2026-10' });
    expect(endpoint).toMatchObject({ api_version: '2026-10', uses_standard_webhook_signature: false });
    await createCustomer(organizationId);
    await receiver.waitFor((r) => at('/versioned')(r).length >= 1);
    await expect.poll(async () => (await v1('GET', `/webhooks/deliveries?endpoint_id=${endpoint.id}`).then((r) => r.json())).items.length).toBeGreaterThanOrEqual(1);
    const changed = await (await v1('PATCH', `/webhooks/endpoints/${endpoint.id}`, { api_version: '2026-04' })).json();
    expect(changed.api_version).toBe('2026-04');
    // Every attempt (a busy machine may time one out and retry) carries the version the event was written in.
    const deliveries = (await v1('GET', `/webhooks/deliveries?endpoint_id=${endpoint.id}`).then((r) => r.json())).items;
    expect(deliveries.map((delivery: { webhook_event: { api_version: string } }) => delivery.webhook_event.api_version)).toEqual(deliveries.map(() => '2026-10'));
    const refused = await v1('POST', '/webhooks/endpoints', { url: `${receiver.url}/x`, format: 'raw', events: ['customer.created'], organization_id: organizationId, api_version: '2025-01' });
    expect(refused.status).toBe(422);
    const plain = await endpointAt('/unversioned', ['customer.created']);
    expect(plain.endpoint.api_version).toBe('2026-04');
  });

  it('retries a failing endpoint with the same webhook-id and body, one delivery row per attempt', async () => {
    const { organizationId, endpoint } = await endpointAt('/flaky', ['customer.created']);
    let calls = 0;
    const long = 'x'.repeat(5000);
    const previous = receiver.respond;
    receiver.respond = (r) => (r.path === '/flaky' && ++calls <= 2 ? { status: calls === 1 ? 500 : 404, body: long } : previous(r));
    await createCustomer(organizationId);
    const requests = at('/flaky')(await receiver.waitFor((r) => at('/flaky')(r).length >= 3));
    await expect.poll(async () => (await sdk().webhooks.listWebhookDeliveries({ endpointId: endpoint.id })).result.items.length).toBe(3);
    receiver.respond = previous;
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    const items = (await v1('GET', `/webhooks/deliveries?endpoint_id=${endpoint.id}`).then((r) => r.json())).items;
    expect(items.map((d: { http_code: number }) => d.http_code)).toEqual([200, 404, 500]);
    expect(items.map((d: { attempt: number }) => d.attempt)).toEqual([3, 2, 1]);
    expect(items[2].response).toHaveLength(2048);
    expect(items[0].webhook_event).toMatchObject({ succeeded: true, last_http_code: 200 });
    const failed = await sdk().webhooks.listWebhookDeliveries({ endpointId: endpoint.id, succeeded: false, httpCodeClass: '5xx' });
    expect(failed.result.items.map((d) => d.httpCode)).toEqual([500]);
  });

  it('delivers the events of one endpoint in order: a later event waits for the earlier one', async () => {
    const { organizationId } = await endpointAt('/ordered', ['customer.created', 'customer.updated']);
    let secondExists = false;
    const previous = receiver.respond;
    receiver.respond = (r) => (r.path === '/ordered' && JSON.parse(r.body).type === 'customer.created' && !secondExists ? { status: 503 } : previous(r));
    const customer = await createCustomer(organizationId, 'First');
    await receiver.waitFor((r) => at('/ordered')(r).length >= 2);
    await sdk().customers.update({ id: customer.id, customerUpdate: { name: 'Second' } });
    secondExists = true;
    const requests = at('/ordered')(await receiver.waitFor((r) => at('/ordered')(r).some((q) => JSON.parse(q.body).type === 'customer.updated')));
    receiver.respond = previous;
    const types = requests.map((r) => JSON.parse(r.body).type);
    const firstUpdate = types.indexOf('customer.updated');
    expect(types.slice(0, firstUpdate).every((t) => t === 'customer.created')).toBe(true);
    expect(types[firstUpdate - 1]).toBe('customer.created');
    expect(firstUpdate).toBeGreaterThanOrEqual(3);
  });

  it('holds the rest of a burst behind an event that failed, then sends them in order once it succeeds', { timeout: 120_000 }, async () => {
    const { organizationId } = await endpointAt('/burst-fail', ['customer.created']);
    const previous = receiver.respond;
    let failed = 0;
    receiver.respond = (r) => (r.path === '/burst-fail' && JSON.parse(r.body).data.name === 'Customer 30' && failed++ < 2 ? { status: 503 } : previous(r));
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push((await createCustomer(organizationId, `Customer ${i}`)).id);
    const got = at('/burst-fail')(await receiver.waitFor((r) => new Set(at('/burst-fail')(r).map((q) => JSON.parse(q.body).data.id)).size >= ids.length, 60_000));
    receiver.respond = previous;
    const order = got.map((q) => JSON.parse(q.body).data.id);
    // The failed event was sent three times, back to back; nothing after it went out before it succeeded.
    expect(order.filter((id) => id === ids[30])).toHaveLength(3);
    expect(order.filter((id) => id !== ids[30])).toEqual(ids.filter((id) => id !== ids[30]));
    expect(order.slice(30, 33)).toEqual([ids[30], ids[30], ids[30]]);
    await expect.poll(() => daemon.db('webhook_deliveries').where({ organization_id: organizationId }).count({ n: '*' }).then(([row]) => Number(row.n)), { timeout: 20_000 }).toBe(62);
  });

  it('counts an answer slower than the timeout as a failed attempt, then retries', async () => {
    const { organizationId, endpoint } = await endpointAt('/slow', ['customer.created']);
    let calls = 0;
    const previous = receiver.respond;
    receiver.respond = (r) => (r.path === '/slow' && ++calls === 1 ? { status: 200, delayMs: 1500 } : previous(r));
    await createCustomer(organizationId);
    await expect.poll(async () => (await v1('GET', `/webhooks/deliveries?endpoint_id=${endpoint.id}`).then((r) => r.json())).items.length, { timeout: 10_000 }).toBe(2);
    receiver.respond = previous;
    const items = (await v1('GET', `/webhooks/deliveries?endpoint_id=${endpoint.id}`).then((r) => r.json())).items;
    expect(items[1]).toMatchObject({ succeeded: false, http_code: null, response: 'Timed out after 500 ms' });
    expect(items[1].duration_ms).toBeGreaterThanOrEqual(450);
    expect(items[0]).toMatchObject({ succeeded: true, http_code: 200 });
  });

  // 100 attempts in a row, one after another: seconds on an idle machine, more on a loaded one.
  it('disables an endpoint after 10 events in a row failed every attempt, skips what is pending, and can be enabled and redelivered', { timeout: 120_000 }, async () => {
    const { organizationId, endpoint } = await endpointAt('/dead', ['customer.updated']);
    const previous = receiver.respond;
    receiver.respond = (r) => (r.path === '/dead' ? { status: 500, body: 'down' } : previous(r));
    const customer = await createCustomer(organizationId);
    for (let i = 0; i < 12; i++) await sdk().customers.update({ id: customer.id, customerUpdate: { name: `Name ${i}` } });
    await expect.poll(async () => (await sdk().webhooks.getWebhookEndpoint({ id: endpoint.id })).enabled, { timeout: 110_000, interval: 100 }).toBe(false);
    const raw = await (await v1('GET', `/webhooks/endpoints/${endpoint.id}`)).json();
    expect(raw.disabled_reason).toMatch(/10 events in a row failed all 10 delivery attempts/);
    const queue = await listEndpointEvents(daemon.db, endpoint.id);
    expect(queue.map((e) => e.status)).toEqual([...Array(10).fill('failed'), 'skipped', 'skipped']);
    expect(queue.slice(0, 10).every((e) => e.attempts === 10)).toBe(true);
    expect(at('/dead')(receiver.received)).toHaveLength(100);
    const deliveries = await sdk().webhooks.listWebhookDeliveries({ endpointId: endpoint.id, limit: 100 });
    expect(deliveries.result.pagination.totalCount).toBe(100);

    // Events after the endpoint was disabled are kept, marked skipped, and not sent.
    await sdk().customers.update({ id: customer.id, customerUpdate: { name: 'After' } });
    await expect.poll(async () => (await listEndpointEvents(daemon.db, endpoint.id)).length).toBe(13);
    expect((await listEndpointEvents(daemon.db, endpoint.id))[12].status).toBe('skipped');

    const refused = await v1('POST', `/webhooks/events/${queue[11].id}/redeliver?endpoint_id=${endpoint.id}`);
    expect(refused.status).toBe(409);
    receiver.respond = previous;
    await sdk().webhooks.updateWebhookEndpoint({ id: endpoint.id, webhookEndpointUpdate: { enabled: true } });
    const accepted = await v1('POST', `/webhooks/events/${queue[11].id}/redeliver`);
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toEqual({ event_id: queue[11].id, endpoint_ids: [endpoint.id] });
    const delivered = await receiver.waitFor((r) => at('/dead')(r).length === 101);
    expect(delivered.at(-1)!.headers['webhook-id']).toBe(queue[11].id);
    expect(delivered.at(-1)!.body).toBe(queue[11].payload);
  });

  it('redelivers a delivered event through the SDK with the same id and body, signed afresh', async () => {
    const { organizationId } = await endpointAt('/again', ['customer.created']);
    await createCustomer(organizationId);
    const [first] = at('/again')(await receiver.waitFor((r) => at('/again')(r).length === 1));
    await sdk().webhooks.redeliverWebhookEvent({ id: header(first.headers['webhook-id']) });
    const [, second] = at('/again')(await receiver.waitFor((r) => at('/again')(r).length === 2));
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
  });

  it('sends Discord and Slack endpoints the short message those services expect', async () => {
    const organizationId = await createOrganization(owner, 'Chatty Shop');
    for (const format of ['discord', 'slack']) {
      expect((await v1('POST', '/webhooks/endpoints', { url: `${receiver.url}/${format}`, format, events: ['customer.created'], organization_id: organizationId })).status).toBe(201);
    }
    const customer = await createCustomer(organizationId, 'Chatty Customer');
    await receiver.waitFor((r) => at('/discord')(r).length === 1 && at('/slack')(r).length === 1);
    const discord = JSON.parse(at('/discord')(receiver.received)[0].body);
    expect(discord).toMatchObject({ content: 'New customer', embeds: [{ title: 'New customer', fields: expect.arrayContaining([{ name: 'Email', value: customer.email, inline: true }, { name: 'Organization', value: 'Chatty Shop', inline: true }]) }] });
    const slack = JSON.parse(at('/slack')(receiver.received)[0].body);
    expect(slack.text).toBe('New customer');
    expect(slack.blocks[0]).toMatchObject({ type: 'section', text: { type: 'mrkdwn' } });
    expect(slack.blocks[0].fields).toEqual(expect.arrayContaining([{ type: 'mrkdwn', text: `*Email*\n${customer.email}` }]));
  });

  it('sends nothing to an endpoint for events before it existed or of types it does not take', async () => {
    const organizationId = await createOrganization(owner, 'Quiet Shop');
    await createCustomer(organizationId, 'Before');
    const res = await v1('POST', '/webhooks/endpoints', { url: `${receiver.url}/quiet`, format: 'raw', events: ['customer.updated'], organization_id: organizationId });
    const endpoint = await res.json();
    const customer = await createCustomer(organizationId, 'After');
    await sdk().customers.update({ id: customer.id, customerUpdate: { name: 'Changed' } });
    const [request] = at('/quiet')(await receiver.waitFor((r) => at('/quiet')(r).length >= 1));
    expect(JSON.parse(request.body)).toMatchObject({ type: 'customer.updated', data: { name: 'Changed' } });
    expect((await listEndpointEvents(daemon.db, endpoint.id)).map((e) => e.type)).toEqual(['customer.updated']);
  });
});
