import { Polar } from '@polar-sh/sdk';
import type { CustomFieldCreate } from '@polar-sh/sdk/models/components/customfieldcreate.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Request, polarSdk } from '../testing/v1.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const sdk = (accessToken: string) => polarSdk(daemon.url, accessToken);

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

const fieldRows = async () => Number((await daemon.db('custom_fields').count({ n: '*' }))[0].n);
const uniqueSlug = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Fern Fields' });
  organizationId = await createOrganization(owner, 'Form Makers');
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/custom-fields', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    const res = await v1(undefined, 'GET', '/custom-fields/');
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'Unauthorized' });
    expect((await v1(undefined, 'POST', '/custom-fields/', { type: 'checkbox', slug: 'x', name: 'X', properties: {} })).status).toBe(401);
  });

  it('round-trips every field type with its properties through the SDK', async () => {
    const polar = sdk(owner.token);
    const fields: CustomFieldCreate[] = [
      { type: 'checkbox', slug: 'terms', name: 'Terms', properties: { formLabel: 'I accept the terms' }, organizationId },
      { type: 'date', slug: 'birthday', name: 'Birthday', properties: { ge: 0, le: 1_900_000_000, formHelpText: 'Your birthday' }, organizationId },
      { type: 'number', slug: 'seats', name: 'Seats', properties: { ge: 1, le: 500, formPlaceholder: '10' }, organizationId },
      { type: 'select', slug: 'size', name: 'Size', properties: { options: [{ value: 's', label: 'Small' }, { value: 'l', label: 'Large' }] }, organizationId },
      { type: 'text', slug: 'company', name: 'Company', properties: { textarea: true, minLength: 2, maxLength: 200 }, organizationId, metadata: { source: 'form' } },
    ];
    for (const input of fields) {
      const created = await polar.customFields.create(input);
      const fetched = await polar.customFields.get({ id: created.id });
      for (const field of [created, fetched]) {
        expect(field).toMatchObject({ type: input.type, slug: input.slug, name: input.name, organizationId, properties: input.properties, modifiedAt: null });
        expect(field.metadata).toEqual(input.metadata ?? {});
      }
    }
    const page = await polar.customFields.list({ organizationId, limit: 100 });
    // Sorted by slug unless asked otherwise, as Polar.
    expect(page.result.items.map((f) => f.slug)).toEqual(['birthday', 'company', 'seats', 'size', 'terms']);
  });

  it('leaves out the properties that were not given instead of answering null', async () => {
    const created = await sdk(owner.token).customFields.create({ type: 'text', slug: uniqueSlug('bare'), name: 'Bare', properties: {}, organizationId });
    const raw = await (await v1(owner.token, 'GET', `/custom-fields/${created.id}`)).json();
    expect(raw.properties).toEqual({});
    expect(raw).toMatchObject({ metadata: {}, modified_at: null });
    expect(raw.created_at).toMatch(/Z$/);
  });

  it('lower-cases slugs and keeps them unique per organization, even once deleted', async () => {
    const polar = sdk(owner.token);
    const slug = uniqueSlug('vat');
    const created = await polar.customFields.create({ type: 'text', slug: slug.toUpperCase(), name: 'VAT', properties: {}, organizationId });
    expect(created.slug).toBe(slug);
    const clash = await polar.customFields.create({ type: 'checkbox', slug, name: 'Again', properties: {}, organizationId }).catch((e: unknown) => e);
    expect(clash).toBeInstanceOf(HTTPValidationError);
    expect((clash as HTTPValidationError).detail).toEqual([{ loc: ['body', 'slug'], msg: 'Custom field with this slug already exists.', type: 'value_error' }]);

    const other = await signUp(daemon.url);
    const otherOrg = await createOrganization(other, 'Other Forms');
    expect((await sdk(other.token).customFields.create({ type: 'text', slug, name: 'Theirs', properties: {}, organizationId: otherOrg })).slug).toBe(slug);

    // Values collected under a slug keep meaning the deleted field, so the slug is not handed out again.
    await polar.customFields.delete({ id: created.id });
    await expect(polar.customFields.create({ type: 'text', slug, name: 'Reborn', properties: {}, organizationId })).rejects.toBeInstanceOf(HTTPValidationError);
  });

  it('lets exactly one of several concurrent creates take a slug', async () => {
    const slug = uniqueSlug('race');
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, i) => v1(owner.token, 'POST', '/custom-fields/', { type: 'checkbox', slug, name: `Race ${i}`, properties: {}, organization_id: organizationId })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422]);
  });

  it('refuses invalid fields with a 422 naming the field, writing nothing', async () => {
    const base = { slug: 'fine', name: 'Fine', organization_id: organizationId };
    const cases: [unknown, (string | number)[]][] = [
      [{ ...base, type: 'select', properties: { options: [] } }, ['body', 'properties', 'options']],
      [{ ...base, type: 'select', properties: {} }, ['body', 'properties', 'options']],
      [{ ...base, type: 'select', properties: { options: [{ value: 'a', label: 'A' }, { value: 'a', label: 'Again' }] } }, ['body', 'properties', 'options', 1, 'value']],
      [{ ...base, type: 'select', properties: { options: [{ value: '', label: 'Empty' }] } }, ['body', 'properties', 'options', 0, 'value']],
      [{ ...base, type: 'text', properties: { min_length: 10, max_length: 5 } }, ['body', 'properties', 'max_length']],
      [{ ...base, type: 'text', properties: { min_length: -1 } }, ['body', 'properties', 'min_length']],
      [{ ...base, type: 'number', properties: { ge: 10, le: 1 } }, ['body', 'properties', 'le']],
      [{ ...base, type: 'number', properties: { ge: 1.5 } }, ['body', 'properties', 'ge']],
      [{ ...base, type: 'date', properties: { ge: 2_000_000_000, le: 0 } }, ['body', 'properties', 'le']],
      [{ ...base, type: 'checkbox', properties: { form_label: null } }, ['body', 'properties', 'form_label']],
      [{ ...base, type: 'checkbox', properties: { form_label: '' } }, ['body', 'properties', 'form_label']],
      [{ ...base, type: 'checkbox' }, ['body', 'properties']],
      [{ ...base, type: 'radio', properties: {} }, ['body', 'type']],
      [{ ...base, slug: 'has space', type: 'checkbox', properties: {} }, ['body', 'slug']],
      [{ ...base, slug: '', type: 'checkbox', properties: {} }, ['body', 'slug']],
      [{ ...base, name: '', type: 'checkbox', properties: {} }, ['body', 'name']],
    ];
    const before = await fieldRows();
    for (const [body, loc] of cases) {
      const res = await v1(owner.token, 'POST', '/custom-fields/', body);
      const answer = await res.json();
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect(answer.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
    }
    expect(await fieldRows()).toBe(before);
  });

  it('updates name, slug and properties, replacing the properties whole', async () => {
    const polar = sdk(owner.token);
    const created = await polar.customFields.create({
      type: 'select', slug: uniqueSlug('plan'), name: 'Plan', properties: { formLabel: 'Plan', options: [{ value: 'a', label: 'A' }] }, organizationId,
    });
    const slug = uniqueSlug('tier');
    const updated = await polar.customFields.update({
      id: created.id,
      customFieldUpdate: { type: 'select', name: 'Tier', slug, properties: { options: [{ value: 'b', label: 'B' }, { value: 'c', label: 'C' }] } },
    });
    expect(updated).toMatchObject({ name: 'Tier', slug, properties: { options: [{ value: 'b', label: 'B' }, { value: 'c', label: 'C' }] } });
    expect(updated.properties).not.toHaveProperty('formLabel');
    expect(updated.modifiedAt).toBeInstanceOf(Date);
    const renamed = await polar.customFields.update({ id: created.id, customFieldUpdate: { type: 'select', name: 'Tier 2' } });
    expect(renamed).toMatchObject({ name: 'Tier 2', slug, properties: { options: [{ value: 'b', label: 'B' }, { value: 'c', label: 'C' }] } });
  });

  it('refuses to change a field type, an invalid property or a taken slug, changing nothing', async () => {
    const polar = sdk(owner.token);
    const taken = await polar.customFields.create({ type: 'text', slug: uniqueSlug('taken'), name: 'Taken', properties: {}, organizationId });
    const created = await polar.customFields.create({ type: 'number', slug: uniqueSlug('qty'), name: 'Qty', properties: { ge: 1 }, organizationId });
    const refused = async (customFieldUpdate: Parameters<Polar['customFields']['update']>[0]['customFieldUpdate'], loc: (string | number)[]) => {
      const error = await polar.customFields.update({ id: created.id, customFieldUpdate }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HTTPValidationError);
      expect((error as HTTPValidationError).detail?.map((d) => d.loc)).toContainEqual(loc);
    };
    await refused({ type: 'text', name: 'Changed' }, ['body', 'type']);
    await refused({ type: 'number', properties: { ge: 5, le: 1 } }, ['body', 'properties', 'le']);
    await refused({ type: 'number', slug: taken.slug }, ['body', 'slug']);
    expect(await polar.customFields.get({ id: created.id })).toMatchObject({ name: 'Qty', type: 'number', slug: created.slug, properties: { ge: 1 }, modifiedAt: null });
  });

  it('lists by type, by a name or slug query, sorted and paged', async () => {
    const other = await signUp(daemon.url);
    const org = await createOrganization(other, 'List Forms');
    const polar = sdk(other.token);
    await polar.customFields.create({ type: 'text', slug: 'alpha', name: 'Zeta name', properties: {}, organizationId: org });
    await polar.customFields.create({ type: 'number', slug: 'beta', name: 'Beta', properties: {}, organizationId: org });
    await polar.customFields.create({ type: 'checkbox', slug: 'gamma_z', name: 'Gamma', properties: {}, organizationId: org });
    const slugs = async (request: Parameters<Polar['customFields']['list']>[0]) => (await polar.customFields.list(request)).result.items.map((f) => f.slug);
    expect(await slugs({ organizationId: org, typeFilter: 'number' })).toEqual(['beta']);
    expect(await slugs({ organizationId: org, typeFilter: ['number', 'checkbox'] })).toEqual(['beta', 'gamma_z']);
    expect(await slugs({ organizationId: org, query: 'ZETA' })).toEqual(['alpha']);
    expect(await slugs({ organizationId: org, query: 'z' })).toEqual(['alpha', 'gamma_z']);
    expect(await slugs({ organizationId: org, query: '_' })).toEqual(['gamma_z']);
    expect(await slugs({ organizationId: org, sorting: ['-name'] })).toEqual(['alpha', 'gamma_z', 'beta']);
    const page = await polar.customFields.list({ organizationId: org, limit: 2, page: 2 });
    expect(page.result).toMatchObject({ items: [{ slug: 'gamma_z' }], pagination: { totalCount: 3, maxPage: 2 } });
    expect((await v1(other.token, 'GET', '/custom-fields/?type=radio')).status).toBe(422);
  });

  it('deletes with 204, after which the field is not found', async () => {
    const polar = sdk(owner.token);
    const created = await polar.customFields.create({ type: 'checkbox', slug: uniqueSlug('gone'), name: 'Gone', properties: {}, organizationId });
    expect((await v1(owner.token, 'DELETE', `/custom-fields/${created.id}`)).status).toBe(204);
    await expect(polar.customFields.get({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.customFields.delete({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.customFields.update({ id: created.id, customFieldUpdate: { type: 'checkbox', name: 'Back' } })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await polar.customFields.list({ organizationId, limit: 100 })).result.items.map((f) => f.id)).not.toContain(created.id);
  });

  it("answers ResourceNotFound for another organization's field, and never lists it", async () => {
    const created = await sdk(owner.token).customFields.create({ type: 'text', slug: uniqueSlug('private'), name: 'Private', properties: {}, organizationId });
    const stranger = await signUp(daemon.url);
    await createOrganization(stranger, 'Stranger Forms');
    const polar = sdk(stranger.token);
    await expect(polar.customFields.get({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.customFields.update({ id: created.id, customFieldUpdate: { type: 'text', name: 'Hijacked' } })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.customFields.delete({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await polar.customFields.list({ organizationId, limit: 100 })).result.items).toEqual([]);
    const create = await v1(stranger.token, 'POST', '/custom-fields/', { type: 'text', slug: 'planted', name: 'Planted', properties: {}, organization_id: organizationId });
    expect(create.status).toBe(422);
    expect((await sdk(owner.token).customFields.get({ id: created.id })).name).toBe('Private');
  });

  it('lets a member read fields but not create, change or delete them', async () => {
    const created = await sdk(owner.token).customFields.create({ type: 'text', slug: uniqueSlug('seen'), name: 'Seen', properties: {}, organizationId });
    const member = await signUp(daemon.url, { name: 'Max Member' });
    await daemon.auth.api.addMember({ body: { userId: member.user.id, organizationId, role: 'member' } });
    const polar = sdk(member.token);
    expect((await polar.customFields.get({ id: created.id })).name).toBe('Seen');
    expect((await polar.customFields.list({ organizationId, limit: 100 })).result.items.map((f) => f.id)).toContain(created.id);
    for (const attempt of [
      () => polar.customFields.create({ type: 'text', slug: 'nope', name: 'Nope', properties: {}, organizationId }),
      () => polar.customFields.update({ id: created.id, customFieldUpdate: { type: 'text', name: 'Nope' } }),
      () => polar.customFields.delete({ id: created.id }),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SDKError);
      expect((error as SDKError).statusCode).toBe(403);
    }
    expect((await sdk(owner.token).customFields.get({ id: created.id })).name).toBe('Seen');
  });

  it('holds an access token to its scopes: custom_fields:read reads, custom_fields:write writes', async () => {
    const mint = async (scopes: string[]) =>
      (await (await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'ci', scopes, organization_id: organizationId })).json()).token as string;
    const reader = sdk(await mint(['custom_fields:read']));
    const writer = sdk(await mint(['custom_fields:write']));
    const created = await writer.customFields.create({ type: 'checkbox', slug: uniqueSlug('token'), name: 'By token', properties: {} });
    expect(created.organizationId).toBe(organizationId);
    expect((await reader.customFields.get({ id: created.id })).name).toBe('By token');
    const error = await reader.customFields.create({ type: 'checkbox', slug: uniqueSlug('reader'), name: 'Reader', properties: {} }).catch((e: unknown) => e);
    expect((error as SDKError).statusCode).toBe(403);
  });
});

describe('/openapi.json', () => {
  it('describes the custom-fields operations with their request schemas', async () => {
    const document = await (await fetch(`${daemon.url}/openapi.json`)).json();
    expect(Object.keys(document.paths['/v1/custom-fields'])).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/v1/custom-fields/{id}'])).toEqual(['get', 'patch', 'delete']);
    expect(JSON.stringify(document.paths['/v1/custom-fields'].post.requestBody)).toContain('"slug"');
    expect(document.paths['/v1/custom-fields/{id}'].delete['x-scopes']).toEqual(['custom_fields:write']);
  });
});
