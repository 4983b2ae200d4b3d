import { Polar } from '@polar-sh/sdk';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, uniqueEmail, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { polarSdk } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
/** A customer of the owner's organization, with an external id: what the others try to reach. */
let target: { id: string; email: string; external_id: string };

const sdk = (accessToken: string) => polarSdk(daemon.url, accessToken);

/** A /v1 call with `token` (null: no credentials). */
const v1 = (token: string | null, method: string, path: string, body?: unknown) =>
  fetch(`${daemon.url}/v1${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function createOrganization(who: SignedIn, name: string): Promise<string> {
  const res = await who.client.post('/organization/create', { name, slug: `${name.toLowerCase().replace(/\W+/g, '-')}-${Math.random().toString(36).slice(2, 8)}` });
  if (res.status !== 200) throw new Error(`organization create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function mintToken(scopes: string[], organization = organizationId, as = owner): Promise<string> {
  const res = await v1(as.token, 'POST', '/organization-access-tokens/', { organization_id: organization, comment: 'customers test', scopes });
  expect(res.status).toBe(201);
  return (await res.json()).token;
}

/** Every customer operation of the SDK, aimed at `target`; each must fail for a caller that does not reach it. */
function everyCall(polar: Polar): [string, () => Promise<unknown>][] {
  return [
    ['get', () => polar.customers.get({ id: target.id })],
    ['update', () => polar.customers.update({ id: target.id, customerUpdate: { name: 'Hijacked' } })],
    ['delete', () => polar.customers.delete({ id: target.id })],
    ['getState', () => polar.customers.getState({ id: target.id })],
    ['getExternal', () => polar.customers.getExternal({ externalId: target.external_id })],
    ['updateExternal', () => polar.customers.updateExternal({ externalId: target.external_id, customerUpdateExternalID: { name: 'Hijacked' } })],
    ['deleteExternal', () => polar.customers.deleteExternal({ externalId: target.external_id })],
    ['getStateExternal', () => polar.customers.getStateExternal({ externalId: target.external_id })],
  ];
}

async function expectUntouched() {
  const row = await daemon.db('customers').where({ id: target.id }).first();
  expect(row).toMatchObject({ name: 'Target', deleted_at: null, external_id: target.external_id });
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Tenancy Owner' });
  organizationId = await createOrganization(owner, 'Tenancy Co');
  const res = await v1(owner.token, 'POST', '/customers/', { email: uniqueEmail('target'), external_id: 'usr_target', name: 'Target', organization_id: organizationId });
  target = await res.json();
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/customers access', () => {
  it('answers 401 to a call without credentials or with a revoked-looking token', async () => {
    expect((await v1(null, 'GET', `/customers/${target.id}`)).status).toBe(401);
    expect((await v1('till_oat_not-a-real-token', 'GET', `/customers/${target.id}`)).status).toBe(401);
  });

  it('answers ResourceNotFound to another organization\'s user on every customer route, and lists nothing of ours', async () => {
    const stranger = await signUp(daemon.url);
    const strangerOrg = await createOrganization(stranger, 'Stranger Co');
    const polar = sdk(stranger.token);
    for (const [name, call] of everyCall(polar)) {
      const error = await call().catch((e: unknown) => e);
      expect({ name, error: error instanceof ResourceNotFound }).toEqual({ name, error: true });
    }
    expect((await polar.customers.list({})).result.items).toEqual([]);
    expect((await polar.customers.list({ organizationId })).result.items).toEqual([]);
    const intoOurs = await v1(stranger.token, 'POST', '/customers/', { email: uniqueEmail(), organization_id: organizationId });
    expect(intoOurs.status).toBe(422);
    expect(await intoOurs.json()).toMatchObject({ error: 'RequestValidationError', detail: [{ loc: ['body', 'organization_id'] }] });
    // The stranger may well have a customer with the same external id: that one is all they see.
    const own = await v1(stranger.token, 'POST', '/customers/', { email: target.email, external_id: target.external_id, organization_id: strangerOrg });
    expect((await polar.customers.getExternal({ externalId: target.external_id })).id).toBe((await own.json()).id);
    await expectUntouched();
  });

  it('answers ResourceNotFound to another organization\'s access token on every customer route', async () => {
    const stranger = await signUp(daemon.url);
    const strangerOrg = await createOrganization(stranger, 'Token Stranger Co');
    const token = await mintToken(['customers:read', 'customers:write'], strangerOrg, stranger);
    for (const [name, call] of everyCall(sdk(token))) {
      const error = await call().catch((e: unknown) => e);
      expect({ name, error: error instanceof ResourceNotFound }).toEqual({ name, error: true });
    }
    expect((await sdk(token).customers.list({})).result.items).toEqual([]);
    await expectUntouched();
  });

  it('lets a member read customers but not create, update or delete them (403 NotPermitted)', async () => {
    const member = await signUp(daemon.url, { name: 'Mo Member' });
    await daemon.auth.api.addMember({ body: { userId: member.user.id, organizationId, role: 'member' } });
    const polar = sdk(member.token);
    expect((await polar.customers.get({ id: target.id })).id).toBe(target.id);
    expect((await polar.customers.getStateExternal({ externalId: target.external_id })).id).toBe(target.id);
    expect((await polar.customers.list({})).result.items.map((c) => c.id)).toContain(target.id);
    const events = (await listEvents(daemon.db, organizationId)).length;
    for (const [method, path, body] of [
      ['POST', '/customers/', { email: uniqueEmail(), organization_id: organizationId }],
      ['PATCH', `/customers/${target.id}`, { name: 'Member edit' }],
      ['PATCH', `/customers/external/${target.external_id}`, { name: 'Member edit' }],
      ['DELETE', `/customers/${target.id}`, undefined],
      ['DELETE', `/customers/external/${target.external_id}`, undefined],
    ] as const) {
      const res = await v1(member.token, method, path, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
      expect(await res.json()).toMatchObject({ error: 'NotPermitted' });
    }
    const error = await polar.customers.update({ id: target.id, customerUpdate: { name: 'Member edit' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SDKError);
    expect((error as SDKError).statusCode).toBe(403);
    expect((await listEvents(daemon.db, organizationId)).length).toBe(events);
    await expectUntouched();
  });

  it('lets a customers:read token read but not write, and a token without customer scopes do neither', async () => {
    const reader = await mintToken(['customers:read']);
    expect((await sdk(reader).customers.getExternal({ externalId: target.external_id })).id).toBe(target.id);
    expect((await v1(reader, 'PATCH', `/customers/${target.id}`, { name: 'Token edit' })).status).toBe(403);
    expect((await v1(reader, 'POST', '/customers/', { email: uniqueEmail() })).status).toBe(403);
    const unrelated = await mintToken(['products:read']);
    const res = await v1(unrelated, 'GET', `/customers/${target.id}`);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'NotPermitted' });
    await expectUntouched();
  });

  it('creates with a customers:write token in the token\'s organization without naming it', async () => {
    const writer = await mintToken(['customers:write']);
    const created = await sdk(writer).customers.create({ email: uniqueEmail('token') });
    expect(created.organizationId).toBe(organizationId);
    await sdk(writer).customers.delete({ id: created.id });
  });

  it('asks a user whose organizations share an external id to name the organization', async () => {
    const second = await createOrganization(owner, 'Tenancy Two');
    const twin = await (await v1(owner.token, 'POST', '/customers/', { email: uniqueEmail(), external_id: target.external_id, organization_id: second })).json();
    const error = await sdk(owner.token).customers.getExternal({ externalId: target.external_id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0]?.loc).toEqual(['query', 'organization_id']);
    const named = await v1(owner.token, 'GET', `/customers/external/${target.external_id}?organization_id=${second}`);
    expect((await named.json()).id).toBe(twin.id);
    const creating = await v1(owner.token, 'POST', '/customers/', { email: uniqueEmail() });
    expect(creating.status).toBe(422);
    expect((await creating.json()).detail[0].loc).toEqual(['body', 'organization_id']);
  });
});
