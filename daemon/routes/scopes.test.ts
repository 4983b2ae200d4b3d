import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../core/billing/shared/scopes.js';
import { V1_ROUTES } from '../http/v1/router.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';

// An organization access token reaches exactly what its scopes name: every route refuses a token that
// lacks all of the route's scopes with 403 NotPermitted, and lets one holding a single one of them past
// the scope check (the answer may then be anything but 401/403: 404 for a made-up id, 422 for an empty body).

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

async function mint(scopes: readonly string[]): Promise<string> {
  const res = await fetch(`${daemon.url}/v1/organization-access-tokens/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ organization_id: organizationId, comment: 'scopes', scopes }),
  });
  if (res.status !== 201) throw new Error(`mint failed: ${res.status} ${await res.text()}`);
  return (await res.json()).token;
}

/** Tokens by the scopes they hold: routes that share scopes share a token, so the walks stay quick as routes grow. */
const minted = new Map<string, Promise<string>>();
const tokenWith = (scopes: readonly Scope[]) => {
  const key = [...scopes].sort().join(' ');
  if (!minted.has(key)) minted.set(key, mint(scopes));
  return minted.get(key)!;
};

const call = (token: string, route: (typeof V1_ROUTES)[number]) =>
  fetch(`${daemon.url}${route.path.replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000')}`, {
    method: route.method.toUpperCase(),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: route.method === 'get' || route.method === 'delete' ? undefined : '{}',
  });

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url);
  organizationId = (await owner.client.post('/organization/create', { name: 'Scoped', slug: `scoped-${Date.now()}` })).body.id;
});
afterAll(async () => {
  await daemon?.close();
});

describe('organization access token scopes', () => {
  const tokenRoutes = () => V1_ROUTES.filter((route) => !route.userOnly && !route.public && !route.tokenOnly);

  it('refuses every route to a token holding none of its scopes', async () => {
    for (const route of tokenRoutes()) {
      const token = await tokenWith(SCOPES.filter((scope) => !route.scopes.includes(scope)));
      const res = await call(token, route);
      expect([res.status, route.operationId]).toEqual([403, route.operationId]);
      expect((await res.json()).error).toBe('NotPermitted');
    }
  });

  it('lets a token holding one of a route’s scopes past the scope check', async () => {
    for (const route of tokenRoutes()) {
      const res = await call(await tokenWith([route.scopes[0]!]), route);
      expect([401, 403], `${route.operationId} answered ${res.status}`).not.toContain(res.status);
    }
  });

  it('lets a token holding any one scope call the routes that describe the token itself', async () => {
    const token = await tokenWith(['webhooks:read']);
    for (const route of V1_ROUTES.filter((r) => r.tokenOnly)) {
      expect([(await call(token, route)).status, route.operationId]).toEqual([200, route.operationId]);
    }
  });

  it('keeps user-only routes (access tokens) away from every token', async () => {
    const token = await mint(SCOPES);
    for (const route of V1_ROUTES.filter((r) => r.userOnly)) {
      expect([(await call(token, route)).status, route.operationId]).toEqual([403, route.operationId]);
    }
  });
});
