import { Polar } from '@polar-sh/sdk';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { NotPermitted } from '@polar-sh/sdk/models/errors/notpermitted.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../core/webhooks/outbox.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk } from '../testing/v1.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const sdk = (accessToken: string) => polarSdk(daemon.url, accessToken);

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Olive Owner' });
  organizationId = await createOrganization(owner, 'Acme Tools');
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/organizations', () => {
  it('answers 401 Unauthorized with WWW-Authenticate to a call without credentials', async () => {
    const res = await fetch(`${daemon.url}/v1/organizations/`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toMatchObject({ error: 'Unauthorized' });
  });

  it('gets an organization through @polar-sh/sdk with every field its validation requires', async () => {
    const organization = await sdk(owner.token).organizations.get({ id: organizationId });
    expect(organization).toMatchObject({ id: organizationId, name: 'Acme Tools', status: 'active', modifiedAt: null });
    expect(organization.featureSettings).toMatchObject({ issueFundingEnabled: false });
    expect(organization.subscriptionSettings).toMatchObject({ allowMultipleSubscriptions: false, prorationBehavior: 'prorate' });
    expect(organization.createdAt).toBeInstanceOf(Date);
  });

  it('lists only the organizations the caller belongs to, paginated', async () => {
    const other = await signUp(daemon.url, { name: 'Oscar Other' });
    await createOrganization(other, 'Other Co');
    const page = await sdk(owner.token).organizations.listOrganizations({ limit: 10 });
    expect(page.result.items.map((o) => o.id)).toEqual([organizationId]);
    expect(page.result.pagination).toEqual({ totalCount: 1, maxPage: 1 });
  });

  it('updates settings, keeps what the update leaves out, and writes organization.updated to the outbox', async () => {
    const updated = await sdk(owner.token).organizations.update({
      id: organizationId,
      organizationUpdate: { email: 'billing@acme.test', website: 'https://acme.test', socials: [{ platform: 'github', url: 'https://github.com/acme' }] },
    });
    expect(updated).toMatchObject({ email: 'billing@acme.test', website: 'https://acme.test', name: 'Acme Tools' });
    expect(updated.modifiedAt).toBeInstanceOf(Date);
    const events = await listEvents(daemon.db, organizationId, { type: 'organization.updated' });
    expect(events.at(-1)?.payload).toMatchObject({ type: 'organization.updated', data: { id: organizationId, email: 'billing@acme.test' } });
    expect(events.at(-1)?.payload.timestamp).toMatch(/Z$/);
  });

  it('updates notification settings and the slug over plain HTTP, refusing a slug that is taken', async () => {
    const patch = (body: unknown) =>
      fetch(`${daemon.url}/v1/organizations/${organizationId}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const ok = await patch({ notification_settings: { new_order: false }, slug: `acme-${Date.now()}` });
    expect(ok.status).toBe(200);
    expect((await ok.json()).notification_settings).toEqual({ new_order: false, new_subscription: true });
    const other = await signUp(daemon.url);
    const otherId = await createOrganization(other, 'Taken Slug');
    const takenSlug = (await sdk(other.token).organizations.get({ id: otherId })).slug;
    const taken = await patch({ slug: takenSlug });
    expect(taken.status).toBe(422);
    expect((await taken.json()).detail).toEqual([{ loc: ['body', 'slug'], msg: 'An organization with this slug already exists', type: 'value_error' }]);
  });

  it('refuses invalid input with a 422 the SDK reads as HTTPValidationError, changing nothing', async () => {
    const before = await sdk(owner.token).organizations.get({ id: organizationId });
    const error = await sdk(owner.token)
      .organizations.update({ id: organizationId, organizationUpdate: { email: 'not an email' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0]?.loc).toEqual(['body', 'email']);
    expect((await sdk(owner.token).organizations.get({ id: organizationId })).email).toBe(before.email);
  });

  it('answers ResourceNotFound for an organization of someone else, never revealing it', async () => {
    const stranger = await signUp(daemon.url);
    await expect(sdk(stranger.token).organizations.get({ id: organizationId })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(
      sdk(stranger.token).organizations.update({ id: organizationId, organizationUpdate: { name: 'Hijacked' } }),
    ).rejects.toBeInstanceOf(ResourceNotFound);
  });

  it('lets a member read but not update (NotPermitted)', async () => {
    const member = await signUp(daemon.url, { name: 'Mia Member' });
    await daemon.auth.api.addMember({ body: { userId: member.user.id, organizationId, role: 'member' } });
    expect((await sdk(member.token).organizations.get({ id: organizationId })).id).toBe(organizationId);
    await expect(
      sdk(member.token).organizations.update({ id: organizationId, organizationUpdate: { name: 'Member Co' } }),
    ).rejects.toBeInstanceOf(NotPermitted);
  });
});

describe('/openapi.json and /docs', () => {
  it('describes every /v1 operation, generated from the schemas', async () => {
    const document = await (await fetch(`${daemon.url}/openapi.json`)).json();
    expect(document.openapi).toBe('3.0.3');
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/v1/organizations', '/v1/organizations/{id}', '/v1/organization-access-tokens']));
    const update = document.paths['/v1/organizations/{id}'].patch;
    expect(update.requestBody.content['application/json'].schema.properties.email).toBeDefined();
    expect(update['x-scopes']).toEqual(['organizations:write']);
  });

  it('renders the operations as a page', async () => {
    const res = await fetch(`${daemon.url}/docs`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('PATCH /v1/organizations/{id}');
  });
});

describe('slug changes racing', () => {
  it('gives one of several simultaneous updates to the same slug the slug, and the others a 422, never a 500', async () => {
    const others = await Promise.all(Array.from({ length: 4 }, () => signUp(daemon.url)));
    const ids = await Promise.all(others.map((who, i) => createOrganization(who, `Racer ${i}`)));
    const slug = `contested-${Date.now()}`;
    const statuses = await Promise.all(
      others.map((who, i) =>
        fetch(`${daemon.url}/v1/organizations/${ids[i]}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${who.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ slug }),
        }).then((res) => res.status),
      ),
    );
    expect(statuses.sort()).toEqual([200, 422, 422, 422]);
    // The outbox holds an event for the one change that happened and none for the three rolled back.
    const events = await Promise.all(ids.map((id) => listEvents(daemon.db, id, { type: 'organization.updated' })));
    expect(events.map((list) => list.length).sort()).toEqual([0, 0, 0, 1]);
  });
});

describe('a malformed JSON body', () => {
  it('is a 422 at ["body"], as Polar answers it, and changes nothing', async () => {
    const res = await fetch(`${daemon.url}/v1/organizations/${organizationId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: '{"name": "Broken',
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: 'RequestValidationError', detail: [{ loc: ['body'], type: 'json_invalid' }] });
  });
});
