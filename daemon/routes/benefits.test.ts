import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import type { BenefitCreate } from '@polar-sh/sdk/models/components/benefitcreate.js';
import { WebhookBenefitCreatedPayload$inboundSchema } from '@polar-sh/sdk/models/components/webhookbenefitcreatedpayload.js';
import { WebhookBenefitUpdatedPayload$inboundSchema } from '@polar-sh/sdk/models/components/webhookbenefitupdatedpayload.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { NotPermitted } from '@polar-sh/sdk/models/errors/notpermitted.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guildTokenKey, mintGuildToken, verifyGuildToken } from '../../core/billing/benefits/guild-token.js';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let secret: string;
let guildKey: Buffer;

const sdk = (accessToken: string) => polarSdk(daemon.url, accessToken);
const GUILD_ID = '112233445566778899';

/** An uploaded file of the organization, through the SDK's files calls. */
async function uploadedFile(who: SignedIn, orgId: string, service: 'downloadable' | 'product_media' = 'downloadable', complete = true): Promise<string> {
  const bytes = randomBytes(64);
  const sha256 = createHash('sha256').update(bytes).digest('base64');
  const upload = await sdk(who.token).files.create({
    organizationId: orgId,
    service,
    name: 'asset.png',
    mimeType: 'image/png',
    size: bytes.length,
    checksumSha256Base64: sha256,
    upload: { parts: [{ number: 1, chunkStart: 0, chunkEnd: bytes.length }] },
  } as Parameters<Polar['files']['create']>[0]);
  if (!complete) return upload.id;
  const put = await fetch(upload.upload.parts[0].url, { method: 'PUT', body: bytes });
  await sdk(who.token).files.uploaded({
    id: upload.id,
    fileUploadCompleted: { id: upload.upload.id, path: upload.upload.path, parts: [{ number: 1, checksumEtag: put.headers.get('etag')!, checksumSha256Base64: null }] },
  });
  return upload.id;
}

const benefitCount = async () => Number((await daemon.db('benefits').count({ n: '*' }))[0].n);
const eventCount = async () => (await listEvents(daemon.db, organizationId)).length;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Bea Benefits' });
  organizationId = await createOrganization(owner, 'Benefits Co');
  secret = (await daemon.auth.$context).secret;
  guildKey = guildTokenKey(secret);
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/benefits', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    const res = await fetch(`${daemon.url}/v1/benefits/`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'Unauthorized' });
  });

  it('creates a benefit of every type and reads each back through the SDK’s validation (create, get, list)', async () => {
    const fileId = await uploadedFile(owner, organizationId);
    const meterId = randomUUID();
    const inputs: BenefitCreate[] = [
      { type: 'custom', description: 'Priority support', organizationId, properties: { note: 'Write to vip@acme.test' } },
      { type: 'discord', description: 'Discord role', organizationId, properties: { guildToken: mintGuildToken(guildKey, GUILD_ID), roleId: '998877', kickMember: true } },
      { type: 'github_repository', description: 'Source access', organizationId, properties: { repositoryOwner: 'acme', repositoryName: 'private.repo', permission: 'triage' } },
      { type: 'downloadables', description: 'The e-book', organizationId, properties: { files: [fileId], archived: { [fileId]: false } } },
      {
        type: 'license_keys',
        description: 'License key',
        organizationId,
        properties: { prefix: 'ACME', expires: { ttl: 1, timeframe: 'year' }, activations: { limit: 3, enableCustomerAdmin: true }, limitUsage: 10 },
      },
      { type: 'meter_credit', description: 'API credits', organizationId, properties: { units: 1000, rollover: true, meterId } },
    ];
    const expected = {
      custom: { note: 'Write to vip@acme.test' },
      discord: { guildId: GUILD_ID, roleId: '998877', kickMember: true, guildToken: expect.any(String) },
      github_repository: { repositoryOwner: 'acme', repositoryName: 'private.repo', permission: 'triage' },
      downloadables: { files: [fileId], archived: { [fileId]: false } },
      license_keys: { prefix: 'ACME', expires: { ttl: 1, timeframe: 'year' }, activations: { limit: 3, enableCustomerAdmin: true }, limitUsage: 10 },
      meter_credit: { units: 1000, rollover: true, meterId },
    };
    for (const input of inputs) {
      const created = await sdk(owner.token).benefits.create(input);
      expect(created).toMatchObject({ type: input.type, description: input.description, selectable: true, deletable: true, isDeleted: false, organizationId, modifiedAt: null });
      expect(created.properties).toEqual(expected[input.type as keyof typeof expected]);
      const read = await sdk(owner.token).benefits.get({ id: created.id });
      expect(read.properties).toEqual(created.properties);
    }
    const page = await sdk(owner.token).benefits.list({ organizationId, limit: 100 });
    expect(page.result.items.map((b) => b.type).sort()).toEqual(['custom', 'discord', 'downloadables', 'github_repository', 'license_keys', 'meter_credit']);
    const visibility = Object.fromEntries(page.result.items.map((b) => [b.type, b.visibilityConfigurable]));
    expect(visibility).toEqual({ custom: true, discord: false, github_repository: false, downloadables: false, license_keys: true, meter_credit: true });
  });

  it('takes a discord guild_token it signed, stores only the guild id, and never answers a secret', async () => {
    const created = await sdk(owner.token).benefits.create({
      type: 'discord',
      description: 'Members role',
      organizationId,
      properties: { guildToken: mintGuildToken(guildKey, GUILD_ID), roleId: '445566', kickMember: false },
    });
    const raw = await (await fetch(`${daemon.url}/v1/benefits/${created.id}`, { headers: { authorization: `Bearer ${owner.token}` } })).json();
    expect(Object.keys(raw.properties).sort()).toEqual(['guild_id', 'guild_token', 'kick_member', 'role_id']);
    expect(verifyGuildToken(guildKey, raw.properties.guild_token)).toBe(GUILD_ID);
    expect(JSON.parse(Buffer.from(raw.properties.guild_token.split('.')[0], 'base64url').toString())).toEqual({ guild_id: GUILD_ID, type: 'discord_guild_token' });
    const stored = await daemon.db('benefits').where({ id: created.id }).first();
    const events = await listEvents(daemon.db, organizationId, { type: 'benefit.created' });
    for (const text of [JSON.stringify(raw), String(stored.properties), JSON.stringify(events)]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(guildKey.toString('base64url'));
      expect(text).not.toContain(guildKey.toString('hex'));
    }

    // The token a benefit answers with is accepted back on update.
    const updated = await sdk(owner.token).benefits.update({
      id: created.id,
      requestBody: { type: 'discord', properties: { guildToken: raw.properties.guild_token, roleId: '778899', kickMember: true } },
    });
    expect(updated.properties).toMatchObject({ guildId: GUILD_ID, roleId: '778899', kickMember: true });
  });

  it('refuses a guild token this server did not sign, creating nothing', async () => {
    const before = await benefitCount();
    const forged = mintGuildToken(guildTokenKey('another-secret-another-secret-0123456789'), GUILD_ID);
    const error = await sdk(owner.token)
      .benefits.create({ type: 'discord', description: 'Forged', organizationId, properties: { guildToken: forged, roleId: '1', kickMember: false } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0]?.loc).toEqual(['body', 'properties', 'guild_token']);
    expect(await benefitCount()).toBe(before);
  });

  it('refuses downloadables naming a file that is not an uploaded downloadable of the organization', async () => {
    const stranger = await signUp(daemon.url);
    const strangerOrg = await createOrganization(stranger, 'Other Files');
    const theirs = await uploadedFile(stranger, strangerOrg);
    const media = await uploadedFile(owner, organizationId, 'product_media');
    const pending = await uploadedFile(owner, organizationId, 'downloadable', false);
    const ours = await uploadedFile(owner, organizationId);
    const before = await benefitCount();
    const error = await sdk(owner.token)
      .benefits.create({ type: 'downloadables', description: 'Files', organizationId, properties: { files: [ours, theirs, media, pending, randomUUID()] } })
      .catch((e: unknown) => e);
    expect((error as HTTPValidationError).detail?.map((issue) => issue.loc)).toEqual([1, 2, 3, 4].map((i) => ['body', 'properties', 'files', i]));
    expect(await benefitCount()).toBe(before);
  });

  it('updates description, metadata, visibility and properties, writing benefit.updated; the type cannot change', async () => {
    const created = await sdk(owner.token).benefits.create({ type: 'custom', description: 'Old name', organizationId, properties: {}, metadata: { tier: 'gold' } });
    expect(created.properties).toEqual({ note: null });
    expect(created.visibility).toBe('public');
    const updated = await sdk(owner.token).benefits.update({
      id: created.id,
      requestBody: { type: 'custom', description: 'New name', visibility: 'private', properties: { note: 'Hello' } },
    });
    expect(updated).toMatchObject({ description: 'New name', visibility: 'private', properties: { note: 'Hello' }, metadata: { tier: 'gold' } });
    expect(updated.modifiedAt).toBeInstanceOf(Date);
    const events = await listEvents(daemon.db, organizationId, { type: 'benefit.updated' });
    const payload = WebhookBenefitUpdatedPayload$inboundSchema.parse(events.at(-1)?.payload);
    expect(payload.data).toMatchObject({ id: created.id, description: 'New name', visibility: 'private' });

    const before = await eventCount();
    const error = await sdk(owner.token)
      .benefits.update({ id: created.id, requestBody: { type: 'license_keys', description: 'Sneaky' } })
      .catch((e: unknown) => e);
    expect((error as HTTPValidationError).detail?.[0]?.loc).toEqual(['body', 'type']);
    expect((await sdk(owner.token).benefits.get({ id: created.id })).description).toBe('New name');
    expect(await eventCount()).toBe(before);
  });

  it('keeps the visibility of a type whose visibility is not configurable', async () => {
    const created = await sdk(owner.token).benefits.create({
      type: 'github_repository',
      description: 'Repo',
      organizationId,
      visibility: 'draft',
      properties: { repositoryOwner: 'acme', repositoryName: 'repo', permission: 'pull' },
    });
    expect(created.visibility).toBe('public');
    const updated = await sdk(owner.token).benefits.update({ id: created.id, requestBody: { type: 'github_repository', description: 'Repository' } });
    expect(updated).toMatchObject({ visibility: 'public', description: 'Repository', properties: { permission: 'pull' } });
  });

  it('refuses invalid input with a 422 and changes nothing', async () => {
    const before = { benefits: await benefitCount(), events: await eventCount() };
    const post = (body: unknown) =>
      fetch(`${daemon.url}/v1/benefits/`, { method: 'POST', headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const cases: [unknown, (string | number)[]][] = [
      [{ type: 'custom', description: 'ab', properties: {} }, ['body', 'description']],
      [{ type: 'custom', description: 'x'.repeat(43), properties: {} }, ['body', 'description']],
      [{ type: 'feature_flag', description: 'Flag', properties: {} }, ['body', 'type']],
      [{ type: 'license_keys', description: 'Keys', properties: { expires: { ttl: 458, timeframe: 'year' } } }, ['body', 'properties', 'expires', 'ttl']],
      [{ type: 'license_keys', description: 'Keys', properties: { activations: { limit: 0, enable_customer_admin: true } } }, ['body', 'properties', 'activations', 'limit']],
      [{ type: 'github_repository', description: 'Repo', properties: { repository_owner: 'a/b', repository_name: 'r', permission: 'push' } }, ['body', 'properties', 'repository_owner']],
      [{ type: 'github_repository', description: 'Repo', properties: { repository_owner: 'a', repository_name: 'r', permission: 'owner' } }, ['body', 'properties', 'permission']],
      [{ type: 'meter_credit', description: 'Credits', properties: { units: 0, rollover: false, meter_id: randomUUID() } }, ['body', 'properties', 'units']],
      [{ type: 'meter_credit', description: 'Credits', properties: { units: 1, rollover: false, meter_id: 'meter' } }, ['body', 'properties', 'meter_id']],
      [{ type: 'downloadables', description: 'Files', properties: { files: [] } }, ['body', 'properties', 'files']],
      [{ type: 'custom', description: 'Meta', properties: {}, metadata: { nested: { no: true } } }, ['body', 'metadata', 'nested']],
    ];
    for (const [body, loc] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      const answer = await res.json();
      expect(answer.error).toBe('RequestValidationError');
      expect(answer.detail[0].loc, JSON.stringify(body)).toEqual(loc);
    }
    const unsupported = await (await post({ type: 'slack_shared_channel', description: 'Slack', properties: {} })).json();
    expect(unsupported.detail[0].msg).toMatch(/Till does not offer feature_flag or slack_shared_channel/);
    expect({ benefits: await benefitCount(), events: await eventCount() }).toEqual(before);
  });

  it('lists with the filters the SDK sends: type, id, exclude_id, query, metadata, sorting and pages', async () => {
    const org = await createOrganization(owner, 'Filter Co');
    const make = (description: string, metadata: Record<string, string | number | boolean>) =>
      sdk(owner.token).benefits.create({ type: 'custom', description, organizationId: org, properties: {}, metadata });
    const a = await make('Alpha perk', { plan: 'pro', seats: 5, beta: true });
    const b = await make('Beta perk', { plan: 'team', seats: 10 });
    const c = await sdk(owner.token).benefits.create({
      type: 'license_keys',
      description: 'Gamma keys',
      organizationId: org,
      properties: {},
      metadata: { plan: 'pro' },
    });
    const ids = async (request: Parameters<Polar['benefits']['list']>[0]) =>
      (await sdk(owner.token).benefits.list({ organizationId: org, ...request })).result.items.map((item) => item.id);

    expect(await ids({})).toEqual([c.id, b.id, a.id]);
    expect(await ids({ sorting: ['description'] })).toEqual([a.id, b.id, c.id]);
    expect(await ids({ typeFilter: 'license_keys' })).toEqual([c.id]);
    expect(await ids({ typeFilter: ['custom', 'feature_flag'], sorting: ['created_at'] })).toEqual([a.id, b.id]);
    expect(await ids({ id: [a.id, c.id], sorting: ['created_at'] })).toEqual([a.id, c.id]);
    expect(await ids({ id: [c.id, a.id, b.id], sorting: ['user_order'] })).toEqual([c.id, a.id, b.id]);
    expect(await ids({ excludeId: b.id, sorting: ['created_at'] })).toEqual([a.id, c.id]);
    expect(await ids({ query: 'PERK', sorting: ['created_at'] })).toEqual([a.id, b.id]);
    expect(await ids({ query: '%' })).toEqual([]);
    expect(await ids({ metadata: { plan: 'pro' }, sorting: ['created_at'] })).toEqual([a.id, c.id]);
    expect(await ids({ metadata: { plan: ['team', 'pro'], seats: 10 } })).toEqual([b.id]);
    expect(await ids({ metadata: { beta: true } })).toEqual([a.id]);
    const page = await sdk(owner.token).benefits.list({ organizationId: org, limit: 2, page: 2 });
    expect(page.result.items.map((item) => item.id)).toEqual([a.id]);
    expect(page.result.pagination).toEqual({ totalCount: 3, maxPage: 2 });
    const res = await fetch(`${daemon.url}/v1/benefits/?sorting=-name`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(res.status).toBe(422);
  });

  it('deletes softly (204): the benefit is gone from the API and benefit.updated carries is_deleted', async () => {
    const created = await sdk(owner.token).benefits.create({ type: 'custom', description: 'Short-lived', organizationId, properties: {} });
    await sdk(owner.token).benefits.delete({ id: created.id });
    await expect(sdk(owner.token).benefits.get({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(sdk(owner.token).benefits.delete({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await sdk(owner.token).benefits.list({ organizationId, id: created.id })).result.items).toEqual([]);
    expect(await daemon.db('benefits').where({ id: created.id }).first()).toMatchObject({ id: created.id });
    const events = await listEvents(daemon.db, organizationId, { type: 'benefit.updated' });
    const payload = WebhookBenefitUpdatedPayload$inboundSchema.parse(events.at(-1)?.payload);
    expect(payload.data).toMatchObject({ id: created.id, isDeleted: true });
  });

  it('refuses to delete a benefit that is not deletable with NotPermitted', async () => {
    const created = await sdk(owner.token).benefits.create({ type: 'custom', description: 'System perk', organizationId, properties: {} });
    await daemon.db('benefits').where({ id: created.id }).update({ deletable: false });
    await expect(sdk(owner.token).benefits.delete({ id: created.id })).rejects.toBeInstanceOf(NotPermitted);
    expect((await sdk(owner.token).benefits.get({ id: created.id })).deletable).toBe(false);
  });

  it('writes benefit.created to the outbox with the benefit as the API serializes it', async () => {
    const created = await sdk(owner.token).benefits.create({ type: 'meter_credit', description: 'Credits', organizationId, properties: { units: 5, rollover: false, meterId: randomUUID() } });
    const events = await listEvents(daemon.db, organizationId, { type: 'benefit.created' });
    const event = events.find((e) => (e.payload.data as { id: string }).id === created.id)!;
    const payload = WebhookBenefitCreatedPayload$inboundSchema.parse(event.payload);
    expect(payload.data).toEqual(created);
    expect(event.payload.timestamp).toMatch(/Z$/);
  });

  it('shows another organization nothing: not listed, and not found to get, update or delete', async () => {
    const created = await sdk(owner.token).benefits.create({ type: 'custom', description: 'Private perk', organizationId, properties: {} });
    const stranger = await signUp(daemon.url);
    await createOrganization(stranger, 'Stranger Co');
    expect((await sdk(stranger.token).benefits.list({ organizationId })).result.items).toEqual([]);
    expect((await sdk(stranger.token).benefits.list({})).result.items).toEqual([]);
    await expect(sdk(stranger.token).benefits.get({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(sdk(stranger.token).benefits.update({ id: created.id, requestBody: { type: 'custom', description: 'Hijacked' } })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(sdk(stranger.token).benefits.delete({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    const error = await sdk(stranger.token)
      .benefits.create({ type: 'custom', description: 'Planted', organizationId, properties: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
  });

  it('lets a member read benefits but not create, update or delete them', async () => {
    const created = await sdk(owner.token).benefits.create({ type: 'custom', description: 'Members see', organizationId, properties: {} });
    const member = await signUp(daemon.url, { name: 'Mo Member' });
    await daemon.auth.api.addMember({ body: { userId: member.user.id, organizationId, role: 'member' } });
    expect((await sdk(member.token).benefits.get({ id: created.id })).id).toBe(created.id);
    const before = await eventCount();
    const createError = await sdk(member.token).benefits.create({ type: 'custom', description: 'Nope', organizationId, properties: {} }).catch((e: unknown) => e);
    expect((createError as SDKError).statusCode).toBe(403);
    const updateError = await sdk(member.token).benefits.update({ id: created.id, requestBody: { type: 'custom', description: 'Nope' } }).catch((e: unknown) => e);
    expect((updateError as SDKError).statusCode).toBe(403);
    await expect(sdk(member.token).benefits.delete({ id: created.id })).rejects.toBeInstanceOf(NotPermitted);
    expect(await eventCount()).toBe(before);
  });

  it('is described in /openapi.json, with the files operations', async () => {
    const document = await (await fetch(`${daemon.url}/openapi.json`)).json();
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/v1/benefits', '/v1/benefits/{id}', '/v1/files', '/v1/files/{id}', '/v1/files/{id}/uploaded']));
    expect(document.paths['/v1/benefits'].post['x-scopes']).toEqual(['benefits:write']);
    expect(document.paths['/v1/files/{id}'].delete.responses['204']).toBeDefined();
  });

  it('lets an access token with benefits:read list benefits but not create one', async () => {
    const res = await fetch(`${daemon.url}/v1/organization-access-tokens/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ organization_id: organizationId, comment: 'ci', scopes: ['benefits:read'] }),
    });
    const { token } = await res.json();
    expect((await sdk(token).benefits.list({})).result.pagination.totalCount).toBeGreaterThan(0);
    const error = await sdk(token).benefits.create({ type: 'custom', description: 'By token', properties: {} }).catch((e: unknown) => e);
    expect((error as SDKError).statusCode).toBe(403);
  });
});
