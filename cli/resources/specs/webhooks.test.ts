import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { startReceiver, type Receiver } from '../../../daemon/webhooks/receiver.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;
let receiver: Receiver;

beforeAll(async () => {
  daemon = await startTestDaemon({ TILL_WEBHOOKS_ALLOW_PRIVATE: '1', TILL_WEBHOOKS_POLL_MS: '20', TILL_WEBHOOKS_RETRY_BASE_MS: '10' });
  acme = await seller(daemon, 'Webhook Shop');
  receiver = await startReceiver();
});
afterAll(async () => {
  await daemon?.close();
  await receiver?.close();
});

describe('till webhooks, scripted with --json', () => {
  it('creates, gets, lists, updates, rotates the secret of and deletes an endpoint', async () => {
    const created = await tillJson(['webhooks', 'create', '--url', 'https://hooks.example.com/till', '--format', 'raw', '--event', 'order.paid', '--event', 'customer.created,customer.updated', '--name', 'Main'], acme.env);
    expect(created).toMatchObject({ url: 'https://hooks.example.com/till', format: 'raw', events: ['order.paid', 'customer.created', 'customer.updated'], enabled: true, name: 'Main', organization_id: acme.organizationId });
    expect(created.secret).toMatch(/^whsec_/);
    expect(await tillJson(['webhooks', 'get', created.id], acme.env)).toEqual(created);
    expect((await tillJson(['webhooks', 'list'], acme.env)).items.map((e: { id: string }) => e.id)).toContain(created.id);

    const updated = await tillJson(['webhooks', 'update', created.id, '--enabled', 'false', '--format', 'slack', '--event', 'all'], acme.env);
    expect(updated).toMatchObject({ enabled: false, format: 'slack', disabled_reason: 'Disabled through the API.' });
    expect(updated.events).toHaveLength(27);

    const rotated = await tillJson(['webhooks', 'rotate-secret', created.id], acme.env);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);

    expect(await tillJson(['webhooks', 'delete', created.id, '--yes'], acme.env)).toEqual({ id: created.id, deleted: true });
    expect((await till(['webhooks', 'get', created.id], acme.env)).exitCode).toBe(4);
  });

  it('exits 2 naming the missing flags off a terminal, and refuses an unknown event type with the flag named', async () => {
    const missing = await till(['webhooks', 'create', '--json'], acme.env);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/--url/);
    const unknown = await till(['webhooks', 'create', '--url', 'https://hooks.example.com/x', '--format', 'raw', '--event', 'order.exploded'], acme.env);
    expect(unknown.exitCode).not.toBe(0);
    expect(unknown.stderr).toMatch(/--event|events/);
    const badCode = await till(['webhooks', 'deliveries', '--code', '6xx'], acme.env);
    expect(badCode.exitCode).toBe(2);
  });

  it('lists deliveries and redelivers an event with the same webhook-id', async () => {
    const endpoint = await tillJson(['webhooks', 'create', '--url', `${receiver.url}/cli`, '--format', 'raw', '--event', 'customer.created'], acme.env);
    await tillJson(['customers', 'create', '--email', 'hook@example.com'], acme.env);
    const [first] = await receiver.waitFor((r) => r.filter((q) => q.path === '/cli').length === 1);
    const eventId = String(first.headers['webhook-id']);
    await expect.poll(async () => (await tillJson(['webhooks', 'deliveries', '--endpoint', endpoint.id], acme.env)).items.length).toBe(1);
    const page = await tillJson(['webhooks', 'deliveries', '--endpoint', endpoint.id, '--succeeded', '--code', '2xx'], acme.env);
    expect(page.items[0]).toMatchObject({ succeeded: true, http_code: 200, webhook_event: { id: eventId, type: 'customer.created' } });

    expect(await tillJson(['webhooks', 'redeliver', eventId], acme.env)).toEqual({ event_id: eventId, endpoint_ids: [endpoint.id] });
    const requests = (await receiver.waitFor((r) => r.filter((q) => q.path === '/cli').length === 2)).filter((q) => q.path === '/cli');
    expect(requests[1].headers['webhook-id']).toBe(eventId);
    expect(requests[1].body).toBe(requests[0].body);

    const human = await till(['webhooks', 'deliveries', '--endpoint', endpoint.id], acme.env);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toMatch(/customer\.created/);
    expect(human.stdout).toMatch(/2 attempts/);
  });
});
