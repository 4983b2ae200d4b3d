import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Request } from '../testing/v1.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startReceiver, type Receiver } from './receiver.js';

// The worker polls once a minute here (the longest TILL_WEBHOOKS_POLL_MS allows): anything delivered within the
// test's time came from the commit waking the worker, not from a poll.
let daemon: TestDaemon;
let owner: SignedIn;
let receiver: Receiver;

beforeAll(async () => {
  daemon = await startTestDaemon({ TILL_WEBHOOKS_ALLOW_PRIVATE: '1', TILL_WEBHOOKS_POLL_MS: '60000' });
  owner = await signUp(daemon.url, { name: 'Wendy Wake' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await daemon?.close();
  await receiver?.close();
});

const v1 = (method: string, path: string, body?: unknown) => v1Request(daemon.url, owner.token, method, path, body);

async function endpointAt(path: string) {
  const organizationId = await createOrganization(owner, `Org ${path}`);
  const res = await v1('POST', '/webhooks/endpoints', { url: `${receiver.url}${path}`, format: 'raw', events: ['customer.created'], organization_id: organizationId });
  expect(res.status).toBe(201);
  return organizationId;
}

const createCustomer = async (organizationId: string, email: string) => {
  const res = await v1('POST', '/customers/', { organization_id: organizationId, email });
  expect(res.status).toBe(201);
  return (await res.json()).id as string;
};

describe('the webhook worker', () => {
  it('delivers an event committed while it is idle without waiting for its next poll', async () => {
    const organizationId = await endpointAt('/idle');
    const id = await createCustomer(organizationId, 'idle@example.com');
    const [request] = (await receiver.waitFor((r) => r.some((q) => q.path === '/idle'), 25_000)).filter((q) => q.path === '/idle');
    expect(JSON.parse(request.body).data.id).toBe(id);
  });

  it('sends a burst of events to one endpoint once each, in commit order, and records every delivery', { timeout: 120_000 }, async () => {
    const organizationId = await endpointAt('/burst');
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push(await createCustomer(organizationId, `burst-${i}@example.com`));
    const got = (await receiver.waitFor((r) => r.filter((q) => q.path === '/burst').length >= ids.length, 60_000)).filter((q) => q.path === '/burst');
    expect(got.map((q) => JSON.parse(q.body).data.id)).toEqual(ids);
    await expect
      .poll(() => daemon.db('webhook_deliveries').where({ organization_id: organizationId, succeeded: true }).count({ n: '*' }).then(([row]) => Number(row.n)), { timeout: 20_000 })
      .toBe(ids.length);
    const states = await daemon.db('webhook_endpoint_events').where({ organization_id: organizationId }).select('status', 'attempts', 'locked_by');
    expect(states.every((s) => s.status === 'succeeded' && Number(s.attempts) === 1 && s.locked_by === null)).toBe(true);
  });
});
