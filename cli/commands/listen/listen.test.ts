import { randomBytes } from 'node:crypto';
import { validateEvent } from '@polar-sh/sdk/webhooks.js';
import { execa, type ResultPromise } from 'execa';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../../core/webhooks/outbox.js';
import { listEvents } from '../../../core/webhooks/outbox.js';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { v1Request } from '../../../daemon/testing/v1.js';
import { seller, type Seller } from '../../testing/catalog.js';
import { startProxy } from '../../testing/proxy.js';
import { startReceiver, type Receiver } from '../../testing/receiver.js';
import { deadServer, TILL_BIN, tempConfigDir, till, tillEnv } from '../../testing/till.js';
import { EVENT_TYPES } from './event-types.js';

let daemon: TestDaemon;
let acme: Seller;
let receiver: Receiver;
const running: ResultPromise[] = [];

/** Starts `till listen …` in the background and waits for its readiness line. */
async function startListen(args: string[], env: Record<string, string> = acme.env) {
  const child = execa(process.execPath, [TILL_BIN, 'listen', ...args], { env: tillEnv(env), extendEnv: false, reject: false, timeout: 60_000 });
  running.push(child);
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  await expect.poll(() => stdout, { timeout: 15_000 }).toMatch(/Ready!|"ready":true/);
  return { child, output: () => stdout };
}

async function createCustomer(): Promise<{ id: string; email: string }> {
  const email = `c-${randomBytes(4).toString('hex')}@example.com`;
  const res = await v1Request(daemon.url, acme.user.token, 'POST', '/customers/', { email, organization_id: acme.organizationId });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; email: string };
}

const customerIdOf = (body: string) => (JSON.parse(body) as { data: { id?: string } }).data.id;
const forwardedFor = (customerId: string, type = 'customer.created') =>
  receiver.received.filter((r) => JSON.parse(r.body).type === type && customerIdOf(r.body) === customerId);

beforeAll(async () => {
  daemon = await startTestDaemon({ TILL_LISTEN_HEARTBEAT_MS: '500', TILL_LISTEN_POLL_MS: '200' });
  acme = await seller(daemon, 'Listen Shop');
  receiver = await startReceiver();
});
afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGINT');
});
afterAll(async () => {
  await receiver?.close();
  await daemon?.close();
});

describe('till listen', () => {
  it('knows the same event types as the daemon', () => {
    expect([...EVENT_TYPES]).toEqual([...WEBHOOK_EVENT_TYPES]);
  });

  it('prints a stable signing secret per profile with --print-secret', async () => {
    const first = await till(['listen', '--print-secret'], acme.env);
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect((await till(['listen', '--print-secret'], acme.env)).stdout).toBe(first.stdout);
    const elsewhere = await till(['listen', '--print-secret'], { ...acme.env, TILL_CONFIG_DIR: tempConfigDir() });
    expect(elsewhere.stdout).not.toBe(first.stdout);
  });

  it('forwards each event as a signed webhook that Polar’s SDK and the Standard Webhooks verifier accept', async () => {
    const secret = (await till(['listen', '--print-secret'], acme.env)).stdout;
    const { output } = await startListen(['--forward-to', receiver.url]);
    expect(output()).toContain(`Ready! Your webhook signing secret is ${secret}`);
    const customer = await createCustomer();
    await expect.poll(() => forwardedFor(customer.id).length, { timeout: 10_000 }).toBe(1);
    const [request] = forwardedFor(customer.id);
    const [event] = (await listEvents(daemon.db, acme.organizationId, { type: 'customer.created' })).filter((e) => (e.payload.data as { id: string }).id === customer.id);

    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hook');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toBe(event.id);
    expect(JSON.parse(request.body)).toEqual(event.payload);
    const parsed = validateEvent(request.body, receiver.webhookHeaders(request), secret) as { type: string; data: { id: string } };
    expect(parsed.type).toBe('customer.created');
    expect(parsed.data.id).toBe(customer.id);
    expect(new Webhook(Buffer.from(secret).toString('base64')).verify(request.body, receiver.webhookHeaders(request))).toEqual(event.payload);
    // A one-byte change of the body no longer verifies.
    expect(() => validateEvent(request.body.replace(customer.id, customer.id.replace(/.$/, 'x')), receiver.webhookHeaders(request), secret)).toThrow(/No matching signature found/);

    await expect.poll(output).toContain(`--> customer.created ${event.id}\n`);
    await expect.poll(output).toMatch(new RegExp(`<-- 200 POST ${receiver.url.replace(/[/.]/g, '\\$&')} \\(\\d+ ms\\)`));
  });

  it('forwards only the types named by --events, and prints JSON lines with --json', async () => {
    const { output } = await startListen(['--forward-to', receiver.url, '--events', 'customer.updated', '--json']);
    const customer = await createCustomer();
    const res = await v1Request(daemon.url, acme.user.token, 'PATCH', `/customers/${customer.id}`, { name: 'Renamed' });
    expect(res.status).toBe(200);
    await expect.poll(() => forwardedFor(customer.id, 'customer.updated').length, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => output().split('\n').filter(Boolean).map((line) => JSON.parse(line)).some((line) => line.forwarded?.status === 200)).toBe(true);
    const lines = output().split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ ready: true, organization_id: acme.organizationId, forward_to: receiver.url });
    expect(lines.filter((line) => line.event).map((line) => line.event.type)).toEqual(['customer.updated']);
    // Only the subscribed type was forwarded for this customer.
    expect(receiver.received.filter((r) => customerIdOf(r.body) === customer.id).map((r) => JSON.parse(r.body).type)).toEqual(['customer.updated']);
  });

  it('catches up on the events committed while its connection was cut, forwarding each once', async () => {
    const proxy = await startProxy(daemon.url);
    try {
      const { output } = await startListen(['--forward-to', receiver.url, '--server', proxy.url]);
      const before = await createCustomer();
      await expect.poll(() => forwardedFor(before.id).length, { timeout: 10_000 }).toBe(1);

      // The network goes away; events keep happening on the server.
      await proxy.pause();
      const missed = [await createCustomer(), await createCustomer(), await createCustomer()];
      await expect.poll(output).toContain('Connection lost');
      await proxy.resume();

      for (const customer of missed) await expect.poll(() => forwardedFor(customer.id).length, { timeout: 15_000 }).toBe(1);
      // And a cut in the middle of a live stream (no refusal, just dropped sockets).
      proxy.cut();
      const after = await createCustomer();
      await expect.poll(() => forwardedFor(after.id).length, { timeout: 15_000 }).toBe(1);
      expect(forwardedFor(before.id)).toHaveLength(1);
      expect(output()).toContain('Reconnected');
    } finally {
      await proxy.close();
    }
  });

  it('only prints the events without --forward-to', async () => {
    const { output } = await startListen([]);
    const customer = await createCustomer();
    const [event] = (await listEvents(daemon.db, acme.organizationId, { type: 'customer.created' })).filter((e) => (e.payload.data as { id: string }).id === customer.id);
    await expect.poll(output, { timeout: 10_000 }).toContain(`--> customer.created ${event.id}\n`);
    expect(output()).not.toContain('<--');
    expect(forwardedFor(customer.id)).toHaveLength(0);
  });

  it('stops cleanly with exit 0 on Ctrl-C', async () => {
    const { child } = await startListen(['--forward-to', receiver.url]);
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
  });

  it('stops with exit 8 and a clear message when the server stays unreachable past --timeout', async () => {
    const server = await deadServer();
    const started = Date.now();
    const result = await till(['listen', '--server', server, '--org', 'AnOrgId', '--timeout', '1'], { ...acme.env, TILL_SERVER: server });
    expect(result.exitCode).toBe(8);
    expect(result.stderr).toMatch(/could not reconnect within 1 s/);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('stops with exit 3 when the server refuses the credentials', async () => {
    const result = await till(['listen', '--org', acme.organizationId], { ...acme.env, TILL_TOKEN: 'not-a-session' });
    expect(result.exitCode).toBe(3);
  });

  it('refuses an unknown event type, suggesting the nearest one', async () => {
    const result = await till(['listen', '--events', 'order.payed'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('Did you mean "order.paid"?');
  });
});
