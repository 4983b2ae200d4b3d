import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';

let daemon: TestDaemon;
let owner: SignedIn;

const unique = () => Math.random().toString(36).slice(2, 8);

/** Slugs no organization may have: every way one could break a URL, a page or a terminal. */
const BAD_SLUGS: [string, string][] = [
  ['a path', 'acme/tools'],
  ['a space', 'acme tools'],
  ['markup', '<b>acme</b>'],
  ['a bidi override', 'acme\u202etools'],
  ['a control character', 'acme\u0007tools'],
  ['uppercase', 'Acme'],
  ['a leading hyphen', '-acme'],
  ['too short', 'ab'],
  ['65 characters', 'a'.repeat(65)],
  ['a million characters', 'a'.repeat(1_000_000)],
];

beforeAll(async () => {
  daemon = await startTestDaemon({ TILL_BODY_LIMIT: String(4 * 1024 * 1024) });
  owner = await signUp(daemon.url, { name: 'Nora New' });
});
afterAll(async () => {
  await daemon?.close();
});

describe('POST /v1/organizations', () => {
  it('answers 401 to a call without credentials', async () => {
    const res = await v1Request(daemon.url, undefined, 'POST', '/organizations/', { name: 'Nobody Co', slug: `nobody-${unique()}` });
    expect(res.status).toBe(401);
  });

  it('creates an organization through @polar-sh/sdk, with the caller as its owner', async () => {
    const slug = `fresh-${unique()}`;
    const created = await polarSdk(daemon.url, owner.token).organizations.create({ name: 'Fresh Goods', slug, email: 'hello@fresh.test' });
    expect(created).toMatchObject({ name: 'Fresh Goods', slug, email: 'hello@fresh.test', status: 'active', modifiedAt: null });
    expect(created.createdAt).toBeInstanceOf(Date);
    // The new organization is the caller's: it reads, lists and is theirs to update.
    expect((await polarSdk(daemon.url, owner.token).organizations.get({ id: created.id })).slug).toBe(slug);
    const role = await daemon.auth.api.getActiveMemberRole({ headers: new Headers({ authorization: `Bearer ${owner.token}` }), query: { organizationId: created.id } });
    expect(role.role).toBe('owner');
    const updated = await polarSdk(daemon.url, owner.token).organizations.update({ id: created.id, organizationUpdate: { name: 'Fresh Goods Ltd' } });
    expect(updated.name).toBe('Fresh Goods Ltd');
  });

  it('answers 201 and derives the slug from the name when none is given', async () => {
    const name = `Café Ünïcode ${unique()}`;
    const res = await v1Request(daemon.url, owner.token, 'POST', '/organizations/', { name });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body.slug).toBe(name.toLowerCase().replace('é', 'e').replace('ü', 'u').replace('ï', 'i').replace(/ /g, '-'));
  });

  it('refuses a slug that is taken, as a 422 on body.slug, and creates nothing', async () => {
    const slug = `taken-${unique()}`;
    expect((await v1Request(daemon.url, owner.token, 'POST', '/organizations/', { name: 'First Co', slug })).status).toBe(201);
    const error = await polarSdk(daemon.url, owner.token).organizations.create({ name: 'Second Co', slug }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail).toEqual([{ loc: ['body', 'slug'], msg: 'An organization with this slug already exists', type: 'value_error' }]);
    expect(await daemon.db('organization').where({ name: 'Second Co' }).first()).toBeUndefined();
  });

  it.each(BAD_SLUGS)('refuses a slug with %s as a 422 on body.slug', async (_what, slug) => {
    const res = await v1Request(daemon.url, owner.token, 'POST', '/organizations/', { name: 'Bad Slug Co', slug });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.detail[0].loc).toEqual(['body', 'slug']);
    expect(JSON.stringify(body).length).toBeLessThan(2000);
  });

  it('refuses a name of control or text-direction characters, and a name that gives no slug', async () => {
    const bidi = await v1Request(daemon.url, owner.token, 'POST', '/organizations/', { name: 'Evil\u202eoC', slug: `evil-${unique()}` });
    expect(bidi.status).toBe(422);
    expect((await bidi.json()).detail[0].loc).toEqual(['body', 'name']);
    const noSlug = await v1Request(daemon.url, owner.token, 'POST', '/organizations/', { name: '日本の店' });
    expect(noSlug.status).toBe(422);
    expect((await noSlug.json()).detail).toEqual([
      { loc: ['body', 'slug'], msg: 'Choose a slug: the name has too few letters or digits to derive one from', type: 'value_error' },
    ]);
  });

  it('refuses an organization access token: a token cannot found an organization', async () => {
    const organizationId = await createOrganization(owner, 'Token Home');
    const minted = await v1Request(daemon.url, owner.token, 'POST', '/organization-access-tokens/', {
      organization_id: organizationId,
      comment: 'ci',
      scopes: ['organizations:read', 'organizations:write'],
    });
    const { token } = await minted.json();
    const res = await v1Request(daemon.url, token, 'POST', '/organizations/', { name: 'Token Co', slug: `token-${unique()}` });
    expect(res.status).toBe(403);
  });
});

describe('PATCH /v1/organizations/{id} slugs', () => {
  it.each(BAD_SLUGS)('refuses renaming the slug to one with %s', async (_what, slug) => {
    const organizationId = await createOrganization(owner, 'Rename Me');
    const res = await v1Request(daemon.url, owner.token, 'PATCH', `/organizations/${organizationId}`, { slug });
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0].loc).toEqual(['body', 'slug']);
  });
});

describe("Better Auth's organization routes", () => {
  it.each(BAD_SLUGS.filter(([what]) => what !== 'a million characters'))('refuse creating an organization whose slug has %s', async (_what, slug) => {
    const res = await owner.client.post('/organization/create', { name: 'Auth Co', slug });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_ORGANIZATION_SLUG');
  });

  it('refuse renaming to a bad slug or a name with a bidi override, and take a good one', async () => {
    const organizationId = await createOrganization(owner, 'Auth Rename');
    const badSlug = await owner.client.post('/organization/update', { organizationId, data: { slug: 'no/slashes' } });
    expect(badSlug.status).toBe(400);
    expect(badSlug.body.code).toBe('INVALID_ORGANIZATION_SLUG');
    const badName = await owner.client.post('/organization/update', { organizationId, data: { name: 'Evil\u202eoC' } });
    expect(badName.status).toBe(400);
    expect(badName.body.code).toBe('INVALID_ORGANIZATION_NAME');
    const slug = `auth-ok-${unique()}`;
    const good = await owner.client.post('/organization/update', { organizationId, data: { slug } });
    expect(good.status).toBe(200);
    expect(good.body.slug).toBe(slug);
  });
});
