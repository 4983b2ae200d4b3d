import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';

// The endpoint API on a daemon with the default policy: private addresses refused.
let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const sdk = (token: string) => polarSdk(daemon.url, token);
const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Wanda Webhook' });
  organizationId = await createOrganization(owner, 'Hook Shop');
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/webhooks', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    for (const [method, path] of [['GET', '/webhooks/endpoints'], ['POST', '/webhooks/endpoints'], ['GET', '/webhooks/deliveries'], ['POST', '/webhooks/events/x/redeliver']]) {
      const res = await v1(undefined, method, path, method === 'POST' ? {} : undefined);
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });

  it('creates, reads, lists, updates and deletes an endpoint through the SDK, with a generated whsec_ secret', async () => {
    const polar = sdk(owner.token);
    const created = await polar.webhooks.createWebhookEndpoint({ url: 'https://hooks.example.com/till', format: 'raw', events: ['product.created', 'order.paid'], organizationId, name: 'Main' });
    expect(created).toMatchObject({ url: 'https://hooks.example.com/till', format: 'raw', events: ['product.created', 'order.paid'], organizationId, enabled: true, name: 'Main', modifiedAt: null });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(await polar.webhooks.getWebhookEndpoint({ id: created.id })).toEqual(created);
    const listed = await polar.webhooks.listWebhookEndpoints({ organizationId, limit: 100 });
    expect(listed.result.items.map((e) => e.id)).toContain(created.id);

    const updated = await polar.webhooks.updateWebhookEndpoint({ id: created.id, webhookEndpointUpdate: { format: 'slack', events: ['customer.created'], enabled: false } });
    expect(updated).toMatchObject({ format: 'slack', events: ['customer.created'], enabled: false, name: 'Main', secret: created.secret });
    expect(updated.modifiedAt).toBeInstanceOf(Date);
    const raw = await (await v1(owner.token, 'GET', `/webhooks/endpoints/${created.id}`)).json();
    expect(raw).toMatchObject({ enabled: false, disabled_reason: 'Disabled through the API.' });
    const enabled = await (await v1(owner.token, 'PATCH', `/webhooks/endpoints/${created.id}`, { enabled: true, name: '' })).json();
    expect(enabled).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null, name: null });

    const rotated = await polar.webhooks.resetWebhookEndpointSecret({ id: created.id });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect((await polar.webhooks.getWebhookEndpoint({ id: created.id })).secret).toBe(rotated.secret);

    await polar.webhooks.deleteWebhookEndpoint({ id: created.id });
    await expect(polar.webhooks.getWebhookEndpoint({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.webhooks.deleteWebhookEndpoint({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await polar.webhooks.listWebhookEndpoints({ organizationId, limit: 100 })).result.items.map((e) => e.id)).not.toContain(created.id);
  });

  it('takes every SDK event type Till produces, checkout.expired and subscription.past_due included, and refuses those of features it lacks', async () => {
    const polar = sdk(owner.token);
    const created = await polar.webhooks.createWebhookEndpoint({ url: 'https://hooks.example.com/late', format: 'raw', events: ['checkout.expired', 'subscription.past_due'], organizationId });
    expect(created.events).toEqual(['checkout.expired', 'subscription.past_due']);
    for (const lacking of ['subscription.paused', 'customer_seat.assigned', 'member.created']) {
      const res = await v1(owner.token, 'POST', '/webhooks/endpoints', { url: 'https://hooks.example.com/x', format: 'raw', events: [lacking], organization_id: organizationId });
      expect(res.status, lacking).toBe(422);
      expect((await res.json()).detail[0].loc.slice(0, 2)).toEqual(['body', 'events']);
    }
  });

  it('keeps a secret the caller gives, and refuses one shorter than 32 characters', async () => {
    const given = `whsec_${'k'.repeat(40)}`;
    const res = await v1(owner.token, 'POST', '/webhooks/endpoints', { url: 'https://hooks.example.com/given', format: 'raw', events: [], secret: given, organization_id: organizationId });
    expect(res.status).toBe(201);
    expect((await res.json()).secret).toBe(given);
    const short = await v1(owner.token, 'POST', '/webhooks/endpoints', { url: 'https://hooks.example.com/given', format: 'raw', events: [], secret: 'whsec_short', organization_id: organizationId });
    expect(short.status).toBe(422);
    expect((await short.json()).detail[0].loc).toEqual(['body', 'secret']);
  });

  it('refuses bad input with 422 and a location: URL, format, event types', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ url: 'not a url', format: 'raw', events: [] }, 'url'],
      [{ url: 'ftp://example.com/x', format: 'raw', events: [] }, 'url'],
      [{ url: 'https://example.com/x', format: 'teams', events: [] }, 'format'],
      [{ url: 'https://example.com/x', format: 'raw', events: ['order.exploded'] }, 'events'],
      [{ url: 'https://example.com/x', format: 'raw' }, 'events'],
    ];
    for (const [body, field] of cases) {
      const res = await v1(owner.token, 'POST', '/webhooks/endpoints', { ...body, organization_id: organizationId });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect((await res.json()).detail[0].loc.slice(0, 2)).toEqual(['body', field]);
    }
    await expect(sdk(owner.token).webhooks.createWebhookEndpoint({ url: 'nope', format: 'raw', events: [], organizationId })).rejects.toBeInstanceOf(HTTPValidationError);
    expect(Number((await daemon.db('webhook_endpoints').where({ url: 'https://example.com/x' }).count({ n: '*' }))[0].n)).toBe(0);
  });

  it('refuses loopback, private, link-local and metadata addresses unless TILL_WEBHOOKS_ALLOW_PRIVATE is set', async () => {
    for (const url of ['http://localhost:3000/hook', 'http://127.0.0.1/hook', 'http://10.0.0.8/hook', 'http://192.168.1.2/x', 'http://169.254.169.254/latest/meta-data', 'http://[::1]:8080/x', 'http://[fd00:ec2::254]/x', 'http://[::ffff:127.0.0.1]/x']) {
      const res = await v1(owner.token, 'POST', '/webhooks/endpoints', { url, format: 'raw', events: ['order.paid'], organization_id: organizationId });
      expect(res.status, url).toBe(422);
      const body = await res.json();
      expect(body.detail[0]).toMatchObject({ loc: ['body', 'url'] });
      expect(body.detail[0].msg).toMatch(/TILL_WEBHOOKS_ALLOW_PRIVATE/);
    }
    const created = await sdk(owner.token).webhooks.createWebhookEndpoint({ url: 'https://hooks.example.com/ok', format: 'raw', events: [], organizationId });
    const moved = await v1(owner.token, 'PATCH', `/webhooks/endpoints/${created.id}`, { url: 'http://127.0.0.1:9/x' });
    expect(moved.status).toBe(422);
    expect((await sdk(owner.token).webhooks.getWebhookEndpoint({ id: created.id })).url).toBe('https://hooks.example.com/ok');
  });

  it('shows members the endpoints and why one is disabled, but not the secret, and lets them change nothing', async () => {
    const created = await sdk(owner.token).webhooks.createWebhookEndpoint({ url: 'https://hooks.example.com/members', format: 'raw', events: ['order.paid'], organizationId });
    const member = await signUp(daemon.url, { name: 'Mia Member' });
    await daemon.auth.api.addMember({ body: { userId: member.user.id, organizationId, role: 'member' } });
    const seen = await (await v1(member.token, 'GET', `/webhooks/endpoints/${created.id}`)).json();
    expect(seen).toMatchObject({ id: created.id, secret: 'whsec_********', enabled: true, disabled_reason: null });
    const listed = await sdk(member.token).webhooks.listWebhookEndpoints({ organizationId, limit: 100 });
    expect(listed.result.items.find((e) => e.id === created.id)?.secret).toBe('whsec_********');
    for (const attempt of [
      () => sdk(member.token).webhooks.createWebhookEndpoint({ url: 'https://hooks.example.com/m', format: 'raw', events: [], organizationId }),
      () => sdk(member.token).webhooks.updateWebhookEndpoint({ id: created.id, webhookEndpointUpdate: { url: 'https://evil.example.com' } }),
      () => sdk(member.token).webhooks.resetWebhookEndpointSecret({ id: created.id }),
      () => sdk(member.token).webhooks.deleteWebhookEndpoint({ id: created.id }),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SDKError);
      expect((error as SDKError).statusCode).toBe(403);
    }
    expect((await sdk(owner.token).webhooks.getWebhookEndpoint({ id: created.id })).url).toBe('https://hooks.example.com/members');
  });

  it("hides another organization's endpoints, deliveries and events: 404 and empty lists", async () => {
    const created = await sdk(owner.token).webhooks.createWebhookEndpoint({ url: 'https://hooks.example.com/private', format: 'raw', events: ['customer.created'], organizationId });
    const stranger = await signUp(daemon.url, { name: 'Sam Stranger' });
    await createOrganization(stranger, 'Elsewhere');
    const polar = sdk(stranger.token);
    await expect(polar.webhooks.getWebhookEndpoint({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.webhooks.updateWebhookEndpoint({ id: created.id, webhookEndpointUpdate: { enabled: false } })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.webhooks.resetWebhookEndpointSecret({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.webhooks.deleteWebhookEndpoint({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await polar.webhooks.listWebhookEndpoints({ organizationId, limit: 100 })).result.items).toEqual([]);
    expect((await polar.webhooks.listWebhookDeliveries({ endpointId: created.id })).result.items).toEqual([]);
    const customer = await sdk(owner.token).customers.create({ email: `c-${Date.now()}@example.com`, organizationId });
    const [event] = await daemon.db('webhook_events').where({ organization_id: organizationId, type: 'customer.created' }).orderBy('seq', 'desc').limit(1);
    expect(JSON.parse(typeof event.payload === 'string' ? event.payload : JSON.stringify(event.payload)).data.id).toBe(customer.id);
    await expect(polar.webhooks.redeliverWebhookEvent({ id: event.id })).rejects.toBeInstanceOf(ResourceNotFound);
  });

  it('answers 404 for an event id that does not exist, and 422 for a bad delivery filter', async () => {
    await expect(sdk(owner.token).webhooks.redeliverWebhookEvent({ id: '00000000-0000-4000-8000-000000000000' })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await v1(owner.token, 'GET', '/webhooks/deliveries?http_code_class=6xx')).status).toBe(422);
    expect((await v1(owner.token, 'GET', '/webhooks/deliveries?start_timestamp=yesterday')).status).toBe(422);
    expect((await v1(owner.token, 'GET', '/webhooks/deliveries?event_type=order.exploded')).status).toBe(422);
  });
});
