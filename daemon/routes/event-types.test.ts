import type { Polar } from '@polar-sh/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSystemEvent } from '../../core/metering/events-repository.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let sdk: Polar;
let customerId: string;

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);
const at = (iso: string) => new Date(iso);

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Evan Types' });
  organizationId = await createOrganization(owner, 'Usage Co');
  sdk = polarSdk(daemon.url, owner.token);
  customerId = (await sdk.customers.create({ organizationId, email: 'usage@example.com', externalId: 'u-1' })).id;
  await sdk.events.ingest({
    events: [
      { name: 'api_call', customerId, timestamp: at('2026-01-01T10:00:00Z') },
      { name: 'api_call', externalCustomerId: 'u-1', timestamp: at('2026-01-03T10:00:00Z') },
      { name: 'api_call', externalCustomerId: 'someone-else', timestamp: at('2026-01-02T10:00:00Z') },
      { name: 'file_upload', customerId, timestamp: at('2026-01-02T12:00:00Z') },
    ],
  });
  await insertSystemEvent(daemon.db, { organizationId, customerId, externalCustomerId: 'u-1', name: 'meter.reset', metadata: {}, at: at('2026-01-04T00:00:00Z') });
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/event-types', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    expect((await v1(undefined, 'GET', '/event-types/')).status).toBe(401);
    expect((await v1(undefined, 'PATCH', `/event-types/${crypto.randomUUID()}`, { label: 'x' })).status).toBe(401);
  });

  it('lists each event name with its statistics, newest first, system events without an id', async () => {
    const page = await sdk.eventTypes.list({ organizationId });
    // The customer's creation is Polar's lifecycle system event customer.created, written now (the newest).
    expect(page.result.items.map((t) => [t.name, t.source, t.occurrences])).toEqual([
      ['customer.created', 'system', 1],
      ['meter.reset', 'system', 1],
      ['api_call', 'user', 3],
      ['file_upload', 'user', 1],
    ]);
    const [created, reset, apiCall] = page.result.items;
    expect(created).toMatchObject({ id: null, label: 'Customer Created' });
    expect(reset).toMatchObject({ id: null, createdAt: null, label: 'Meter Reset', organizationId });
    expect(apiCall).toMatchObject({ label: 'api_call', labelPropertySelector: null, firstSeen: at('2026-01-01T10:00:00Z'), lastSeen: at('2026-01-03T10:00:00Z') });
    expect(apiCall.id).toMatch(/^[0-9a-f-]{36}$/);
    // Listed again, a name keeps its type.
    expect((await sdk.eventTypes.list({ organizationId, source: 'user', sorting: ['name'] })).result.items.map((t) => [t.name, t.id])).toEqual([
      ['api_call', apiCall.id],
      ['file_upload', expect.any(String)],
    ]);
  });

  it('filters by customer (its id or external id), source and a query on the name or label', async () => {
    const forCustomer = await sdk.eventTypes.list({ customerId, source: 'user' });
    expect(forCustomer.result.items.map((t) => [t.name, t.occurrences])).toEqual([
      ['api_call', 2],
      ['file_upload', 1],
    ]);
    expect((await sdk.eventTypes.list({ externalCustomerId: 'someone-else' })).result.items.map((t) => t.name)).toEqual(['api_call']);
    expect((await sdk.eventTypes.list({ source: 'system' })).result.items.map((t) => t.name)).toEqual(['customer.created', 'meter.reset']);
    expect((await sdk.eventTypes.list({ query: 'UPLOAD' })).result.items.map((t) => t.name)).toEqual(['file_upload']);
    const bad = await v1(owner.token, 'GET', '/event-types/?sorting=size');
    expect(bad.status).toBe(422);
  });

  it('sets a label, which the list shows and a query finds', async () => {
    const apiCall = (await sdk.eventTypes.list({ query: 'api_call' })).result.items[0];
    const updated = await sdk.eventTypes.update({ id: apiCall.id!, eventTypeUpdate: { label: '  API calls  ', labelPropertySelector: 'metadata.route' } });
    expect(updated).toMatchObject({ id: apiCall.id, name: 'api_call', label: 'API calls', labelPropertySelector: 'metadata.route', organizationId });
    expect(updated.modifiedAt).not.toBeNull();
    expect((await sdk.eventTypes.list({ query: 'calls' })).result.items.map((t) => [t.name, t.label])).toEqual([['api_call', 'API calls']]);

    const blank = await v1(owner.token, 'PATCH', `/event-types/${apiCall.id}`, { label: '   ' });
    expect(blank.status).toBe(422);
    // Polar declares no body for this 404: the SDK raises its generic error, with the status.
    await expect(sdk.eventTypes.update({ id: crypto.randomUUID(), eventTypeUpdate: { label: 'Nothing' } })).rejects.toMatchObject({ statusCode: 404 });
    expect(await (await v1(owner.token, 'PATCH', `/event-types/${crypto.randomUUID()}`, { label: 'Nothing' })).json()).toMatchObject({ error: 'ResourceNotFound' });
  });

  it('needs events:write to label and hides other organizations’ types', async () => {
    const apiCall = (await sdk.eventTypes.list({ query: 'api_call' })).result.items[0];
    const minted = await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'reader', scopes: ['events:read'], organization_id: organizationId });
    const { token } = (await minted.json()) as { token: string };
    expect((await v1(token, 'GET', '/event-types/')).status).toBe(200);
    expect((await v1(token, 'PATCH', `/event-types/${apiCall.id}`, { label: 'Mine' })).status).toBe(403);

    const stranger = await signUp(daemon.url, { name: 'Stranger' });
    await createOrganization(stranger, 'Elsewhere');
    expect((await (await v1(stranger.token, 'GET', '/event-types/')).json()).items).toEqual([]);
    expect((await v1(stranger.token, 'PATCH', `/event-types/${apiCall.id}`, { label: 'Mine' })).status).toBe(404);
  });
});
