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
    expect(updated.events).toHaveLength(29);

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
    // A value till cannot use exits 5 (INVALID_FLAG); two flags that exclude each other are a usage error (2).
    const badCode = await till(['webhooks', 'deliveries', '--code', '6xx', '--json'], acme.env);
    expect(badCode.exitCode).toBe(5);
    expect(JSON.parse(badCode.stderr).error.code).toBe('INVALID_FLAG');
    const both = await till(['webhooks', 'deliveries', '--failed', '--succeeded', '--json'], acme.env);
    expect(both.exitCode).toBe(2);
    expect(JSON.parse(both.stderr).error.code).toBe('CONFLICTING_FLAGS');
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

    // Rows on stdout, the page note on stderr (a pipe gets rows only), counted in good grammar.
    const human = await till(['webhooks', 'deliveries', '--endpoint', endpoint.id], acme.env);
    expect(human.exitCode).toBe(0);
    expect(human.stdout.split('\n')).toHaveLength(2);
    expect(human.stdout).toMatch(/customer\.created/);
    expect(human.stdout).not.toMatch(/page|attempts/i);
    expect(human.stderr).toBe('');
    const firstPage = await till(['webhooks', 'deliveries', '--endpoint', endpoint.id, '--limit', '1'], acme.env);
    expect(firstPage.stdout.split('\n')).toHaveLength(1);
    expect(firstPage.stderr).toBe('Page 1 of 2, 2 attempts in all: --page 2 for the next.');
    const none = await till(['webhooks', 'deliveries', '--endpoint', endpoint.id, '--failed'], acme.env);
    expect(none).toMatchObject({ exitCode: 0, stdout: '', stderr: 'No deliveries.' });

    const redelivered = await till(['webhooks', 'redeliver', eventId, '--endpoint', endpoint.id], acme.env);
    expect(redelivered.stdout).toContain(`Event ${eventId} queued again for 1 endpoint:`);
    const listed = await till(['webhooks', 'list'], acme.env);
    expect(listed.stdout).toMatch(/\t1 type\t/);
  });
});
