import { createHash } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { NotPermitted } from '@polar-sh/sdk/models/errors/notpermitted.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { v1Request } from '../testing/v1.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { ACCESS_TOKEN_CACHE_MS } from '../../core/billing/access-tokens/cache.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

async function mint(scopes: string[], extra: Record<string, unknown> = {}) {
  const res = await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'ci', scopes, ...extra });
  expect(res.status).toBe(201);
  return (await res.json()) as { token: string; organization_access_token: { id: string; expires_at: string | null } };
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Tess Token' });
  const res = await owner.client.post('/organization/create', { name: 'Token Co', slug: `token-co-${Date.now()}` });
  organizationId = res.body.id;
});
afterAll(async () => {
  await daemon?.close();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('/v1/organization-access-tokens', () => {
  it('answers 401 without credentials', async () => {
    expect((await v1(undefined, 'GET', '/organization-access-tokens/')).status).toBe(401);
    expect((await v1('till_oat_not-a-real-token', 'GET', '/organizations/')).status).toBe(401);
  });

  it('returns a till_oat_ token once and stores only its SHA-256', async () => {
    const { token, organization_access_token } = await mint(['organizations:read']);
    expect(token).toMatch(/^till_oat_[A-Za-z0-9_-]{43}$/);
    expect(organization_access_token).toMatchObject({ comment: 'ci', scopes: ['organizations:read'], organization_id: organizationId, last_used_at: null, modified_at: null, expires_at: null });
    const row = await daemon.db('organization_access_tokens').where({ id: organization_access_token.id }).first();
    expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(token.slice('till_oat_'.length));
    const listed = await (await v1(owner.token, 'GET', '/organization-access-tokens/')).json();
    expect(JSON.stringify(listed)).not.toContain(token);
    expect(listed.items.map((t: { id: string }) => t.id)).toContain(organization_access_token.id);
  });

  it('works as the SDK accessToken within its scopes and its organization only', async () => {
    const { token } = await mint(['organizations:read']);
    const polar = new Polar({ accessToken: token, serverURL: daemon.url });
    expect((await polar.organizations.get({ id: organizationId })).id).toBe(organizationId);
    const page = await polar.organizations.listOrganizations({});
    expect(page.result.items.map((o) => o.id)).toEqual([organizationId]);
    await expect(polar.organizations.update({ id: organizationId, organizationUpdate: { name: 'Renamed by CI' } })).rejects.toBeInstanceOf(NotPermitted);
  });

  it('records when a token was last used', async () => {
    const { token, organization_access_token } = await mint(['organizations:read']);
    await v1(token, 'GET', '/organizations/');
    const row = await daemon.db('organization_access_tokens').where({ id: organization_access_token.id }).first();
    expect(row.last_used_at).not.toBeNull();
  });

  it('refuses a scope Polar does not know with a 422 naming it', async () => {
    const res = await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'bad', scopes: ['products:read', 'root:everything'] });
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0].loc).toEqual(['body', 'scopes', 1]);
  });

  it('cannot be used to mint, list or revoke tokens', async () => {
    const { token } = await mint(['organization_access_tokens:write', 'organizations:read']);
    const res = await v1(token, 'POST', '/organization-access-tokens/', { comment: 'escalate', scopes: ['products:write'] });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'NotPermitted' });
    expect((await v1(token, 'GET', '/organization-access-tokens/')).status).toBe(403);
  });

  it('expires after expires_in (seconds or an ISO 8601 duration)', async () => {
    const { token, organization_access_token } = await mint(['organizations:read'], { expires_in: 'PT1H' });
    expect(new Date(organization_access_token.expires_at!).getTime() - Date.now()).toBeGreaterThan(3590_000);
    expect((await v1(token, 'GET', '/organizations/')).status).toBe(200);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 3601_000);
    expect((await v1(token, 'GET', '/organizations/')).status).toBe(401);
  });

  it('changes comment and scopes, and stops working once deleted', async () => {
    const { token, organization_access_token } = await mint(['organizations:read']);
    const updated = await v1(owner.token, 'PATCH', `/organization-access-tokens/${organization_access_token.id}`, { comment: 'renamed', scopes: ['organizations:read', 'organizations:write'] });
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({ comment: 'renamed', scopes: ['organizations:read', 'organizations:write'], modified_at: expect.stringMatching(/Z$/) });
    const deleted = await v1(owner.token, 'DELETE', `/organization-access-tokens/${organization_access_token.id}`);
    expect(deleted.status).toBe(204);
    expect((await v1(token, 'GET', '/organizations/')).status).toBe(401);
    const again = await v1(owner.token, 'DELETE', `/organization-access-tokens/${organization_access_token.id}`);
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ error: 'ResourceNotFound' });
  });

  it('keeps each organization\'s tokens to itself', async () => {
    const { organization_access_token } = await mint(['organizations:read']);
    const stranger = await signUp(daemon.url);
    await stranger.client.post('/organization/create', { name: 'Stranger Co', slug: `stranger-${Date.now()}` });
    expect((await v1(stranger.token, 'DELETE', `/organization-access-tokens/${organization_access_token.id}`)).status).toBe(404);
    const listed = await (await v1(stranger.token, 'GET', '/organization-access-tokens/')).json();
    expect(listed.items).toEqual([]);
    const foreign = await v1(stranger.token, 'POST', '/organization-access-tokens/', { organization_id: organizationId, comment: 'x', scopes: ['organizations:read'] });
    expect(foreign.status).toBe(422);
  });
});

// A verified token is kept in memory for ACCESS_TOKEN_CACHE_MS (core/billing/access-tokens/cache.ts). Each test uses
// the token just before changing it, so it is in the cache when the change comes: without the forgetting, these
// requests would still be let through by the copy in memory.
describe('a token kept in memory after use', () => {
  it('is refused on the very next request once deleted', async () => {
    const { token, organization_access_token } = await mint(['organizations:read']);
    expect((await v1(token, 'GET', '/organizations/')).status).toBe(200);
    expect((await v1(token, 'GET', '/organizations/')).status).toBe(200);
    expect((await v1(owner.token, 'DELETE', `/organization-access-tokens/${organization_access_token.id}`)).status).toBe(204);
    expect((await v1(token, 'GET', '/organizations/')).status).toBe(401);
  });

  it('holds its new scopes from the next request on', async () => {
    const { token, organization_access_token } = await mint(['organizations:read', 'products:read']);
    expect((await v1(token, 'GET', '/products/')).status).toBe(200);
    const narrowed = await v1(owner.token, 'PATCH', `/organization-access-tokens/${organization_access_token.id}`, { scopes: ['organizations:read'] });
    expect(narrowed.status).toBe(200);
    expect((await v1(token, 'GET', '/products/')).status).toBe(403);
    expect((await v1(token, 'GET', '/organizations/')).status).toBe(200);
  });

  it('is refused at once when its organization is deleted', async () => {
    const doomed = (await owner.client.post('/organization/create', { name: 'Doomed Co', slug: `doomed-${Date.now()}` })).body.id as string;
    const { token } = await mint(['organizations:read'], { organization_id: doomed });
    expect((await v1(token, 'GET', '/organizations/')).status).toBe(200);
    expect((await owner.client.post('/organization/delete', { organizationId: doomed })).status).toBe(200);
    expect((await v1(token, 'GET', '/organizations/')).status).toBe(401);
  });

  it('stops working once revoked by another daemon (the row changed behind this one\'s back), within the cache\'s bound', async () => {
    const { token, organization_access_token } = await mint(['organizations:read']);
    expect((await v1(token, 'GET', '/organizations/')).status).toBe(200);
    // What another tilld sharing the database does on DELETE: this daemon is not told.
    await daemon.db('organization_access_tokens').where({ id: organization_access_token.id }).update({ deleted_at: new Date().toISOString() });
    // Polled, not timed: the test fails (by its timeout) only if the token is never refused.
    let status = 200;
    while (status === 200) {
      status = (await v1(token, 'GET', '/organizations/')).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, ACCESS_TOKEN_CACHE_MS / 10));
    }
    expect(status).toBe(401);
  });
});

describe('input holding a NUL character', () => {
  it('is refused with 422 wherever it appears, never reaching the database', async () => {
    const inPath = await v1(owner.token, 'DELETE', '/organization-access-tokens/%00');
    expect(inPath.status).toBe(422);
    expect((await inPath.json()).detail[0].loc).toEqual(['path', 'id']);
    const inBody = await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'a\u0000b', scopes: ['products:read'] });
    expect(inBody.status).toBe(422);
    expect((await inBody.json()).detail[0].loc).toEqual(['body', 'comment']);
  });
});

describe('expires_in bounds', () => {
  it('refuses a lifetime of zero or past ten years, in either form, with a 422', async () => {
    for (const expires_in of ['PT0S', 'P999999999D', 0, 400_000_000]) {
      const res = await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'bounds', scopes: ['products:read'], expires_in });
      expect([expires_in, res.status]).toEqual([expires_in, 422]);
    }
  });

  it('refuses a value that is neither seconds nor an ISO 8601 duration with a 422 naming the field', async () => {
    for (const expires_in of ['x', 'P1', '-1', '', 'P99999999Y', -1, 1.5, true]) {
      const res = await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'bad', scopes: ['products:read'], expires_in });
      expect([expires_in, res.status]).toEqual([expires_in, 422]);
      expect((await res.json()).detail[0].loc).toEqual(['body', 'expires_in']);
    }
  });
});

describe('GET /v1/organization-access-tokens/current', () => {
  it('answers 401 without credentials or with a token that is not live', async () => {
    expect((await v1(undefined, 'GET', '/organization-access-tokens/current')).status).toBe(401);
    expect((await v1('till_oat_not-a-real-token', 'GET', '/organization-access-tokens/current')).status).toBe(401);
  });

  it('describes the calling token, its scopes, expiry and organization, even to a token without organizations:read', async () => {
    const { token, organization_access_token } = await mint(['products:read'], { expires_in: 'P30D' });
    const res = await v1(token, 'GET', '/organization-access-tokens/current');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      id: organization_access_token.id,
      scopes: ['products:read'],
      expires_at: organization_access_token.expires_at,
      organization_id: organizationId,
      organization: { id: organizationId, name: 'Token Co', slug: expect.stringMatching(/^token-co-/) },
    });
    expect(JSON.stringify(body)).not.toContain(token);
  });

  it('refuses a session with 403: only a token has a current token', async () => {
    const res = await v1(owner.token, 'GET', '/organization-access-tokens/current');
    expect(res.status).toBe(403);
  });
});

describe('deeply nested input', () => {
  it('is refused with a 422 instead of being walked to a stack overflow', async () => {
    const nested = `${'['.repeat(10_000)}"leaf"${']'.repeat(10_000)}`;
    const res = await fetch(`${daemon.url}/v1/organizations/${organizationId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: `{"socials": ${nested}}`,
    });
    expect(res.status).toBe(422);
  });
});
