import { randomBytes } from 'node:crypto';
import { validateEvent } from '@polar-sh/sdk/webhooks.js';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { v1Request } from '../../../daemon/testing/v1.js';
import { seller, type Seller } from '../../testing/catalog.js';
import { startReceiver, type Receiver } from '../../testing/receiver.js';
import { TILL_BIN, till, tillEnv } from '../../testing/till.js';

/*
 * `till listen` forwards what a real endpoint gets: the delivery worker and the CLI, given the same secret, send
 * the same body and signatures that verify the same way. And `till events resend` sends an event again.
 */

let daemon: TestDaemon;
let acme: Seller;
let worker: Receiver;
let forwarded: Receiver;
let listener: ResultPromise;
let secret: string;

beforeAll(async () => {
  daemon = await startTestDaemon({ TILL_WEBHOOKS_ALLOW_PRIVATE: '1', TILL_WEBHOOKS_POLL_MS: '50' });
  acme = await seller(daemon, 'Parity Shop');
  worker = await startReceiver();
  forwarded = await startReceiver();
  secret = (await till(['listen', '--print-secret'], acme.env)).stdout;
  expect(secret).toMatch(/^whsec_/);
  // A real endpoint keyed with the secret `till listen` forwards with.
  const created = await v1Request(daemon.url, acme.user.token, 'POST', '/webhooks/endpoints', { url: worker.url, format: 'raw', events: ['customer.created'], secret, organization_id: acme.organizationId });
  expect(created.status, await created.clone().text()).toBe(201);
  listener = execa(process.execPath, [TILL_BIN, 'listen', '--forward-to', forwarded.url, '--events', 'customer.created'], { env: tillEnv(acme.env), extendEnv: false, reject: false });
  let output = '';
  listener.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  for (const started = Date.now(); !output.includes('Ready!'); await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (Date.now() - started > 15_000) throw new Error(`till listen did not get ready: ${output}`);
  }
});
afterAll(async () => {
  listener?.kill('SIGINT');
  await worker?.close();
  await forwarded?.close();
  await daemon?.close();
});

async function createCustomer(): Promise<string> {
  const res = await v1Request(daemon.url, acme.user.token, 'POST', '/customers/', { email: `p-${randomBytes(4).toString('hex')}@example.com`, organization_id: acme.organizationId });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}
const about = (receiver: Receiver, customerId: string) => receiver.received.filter((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id === customerId);

describe('till listen and the delivery worker', () => {
  it('send the same body under the same webhook-id, signed so that the same secret verifies both', async () => {
    const customerId = await createCustomer();
    await expect.poll(() => about(worker, customerId).length, { timeout: 15_000 }).toBe(1);
    await expect.poll(() => about(forwarded, customerId).length, { timeout: 15_000 }).toBe(1);
    const [real] = about(worker, customerId);
    const [local] = about(forwarded, customerId);
    expect(local.body).toBe(real.body);
    expect(local.headers['webhook-id']).toBe(real.headers['webhook-id']);
    expect(local.headers['content-type']).toBe(real.headers['content-type']);
    for (const request of [real, local]) {
      const event = validateEvent(request.body, worker.webhookHeaders(request), secret) as { type: string };
      expect(event.type).toBe('customer.created');
    }
  });
});

describe('till events resend', () => {
  it('sends an event again to the endpoints that got it, with the same webhook-id and body', async () => {
    const customerId = await createCustomer();
    await expect.poll(() => about(worker, customerId).length, { timeout: 15_000 }).toBe(1);
    const [first] = about(worker, customerId);
    const eventId = String(first.headers['webhook-id']);
    const result = await till(['events', 'resend', eventId, '--json'], acme.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ event_id: eventId });
    await expect.poll(() => about(worker, customerId).length, { timeout: 15_000 }).toBe(2);
    const [, again] = about(worker, customerId);
    expect(again.headers['webhook-id']).toBe(eventId);
    expect(again.body).toBe(first.body);
  });

  it('answers exit 4 for an event that does not exist', async () => {
    const result = await till(['events', 'resend', '00000000-0000-0000-0000-000000000000'], acme.env);
    expect(result.exitCode).toBe(4);
  });
});
