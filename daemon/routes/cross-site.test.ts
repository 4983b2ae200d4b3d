import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { createOrganization, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url);
  organizationId = await createOrganization(owner, 'Cross Site');
});
afterAll(async () => {
  await daemon?.close();
});

const cookieHeader = (who: SignedIn) => [...who.client.jar].map(([k, v]) => `${k}=${v}`).join('; ');

/** Another origin on the same host: SameSite=Lax cookies still travel with its posts. */
const otherPort = () => {
  const url = new URL(daemon.url);
  url.port = String(Number(url.port) === 65535 ? 1 : Number(url.port) + 1);
  return url.origin;
};

async function productCount(): Promise<number> {
  const res = await v1Request(daemon.url, owner.token, 'GET', `/products?organization_id=${organizationId}`);
  return ((await res.json()) as { pagination: { total_count: number } }).pagination.total_count;
}

describe('cookie-authenticated /v1 writes', () => {
  it('are refused from another origin, even another port of the same host, and change nothing', async () => {
    const before = await productCount();
    for (const origin of [otherPort(), 'https://evil.example']) {
      const res = await fetch(`${daemon.url}/v1/products`, {
        method: 'POST',
        headers: { cookie: cookieHeader(owner), origin, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Forged', organization_id: organizationId, prices: [{ amount_type: 'free' }] }),
      });
      expect(res.status, origin).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'CROSS_ORIGIN_REQUEST' });
    }
    // A body-less post (a plain form or fetch with no content) is refused the same way.
    const bodiless = await fetch(`${daemon.url}/v1/webhooks/events/00000000-0000-0000-0000-000000000000/redeliver`, {
      method: 'POST',
      headers: { cookie: cookieHeader(owner), origin: otherPort() },
    });
    expect(bodiless.status).toBe(403);
    expect(await productCount()).toBe(before);
  });

  it('are let through from the daemon’s own origin', async () => {
    const res = await fetch(`${daemon.url}/v1/products`, {
      method: 'POST',
      headers: { cookie: cookieHeader(owner), origin: daemon.url, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Own', organization_id: organizationId, prices: [{ amount_type: 'free' }] }),
    });
    expect(res.status).toBe(201);
  });

  it('leave bearer tokens alone, whatever the origin', async () => {
    const res = await fetch(`${daemon.url}/v1/products`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, origin: 'https://elsewhere.example', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bearer', organization_id: organizationId, prices: [{ amount_type: 'free' }] }),
    });
    expect(res.status).toBe(201);
  });

  it('do not stop cookie reads from another origin (the browser does not let that origin see the answer)', async () => {
    const res = await fetch(`${daemon.url}/v1/products?organization_id=${organizationId}`, { headers: { cookie: cookieHeader(owner), origin: otherPort() } });
    expect(res.status).toBe(200);
  });
});

describe('authenticated /v1 answers', () => {
  it('say Cache-Control: no-store', async () => {
    const bearer = await v1Request(daemon.url, owner.token, 'GET', `/products?organization_id=${organizationId}`);
    expect(bearer.status).toBe(200);
    expect(bearer.headers.get('cache-control')).toBe('no-store');
    const cookie = await fetch(`${daemon.url}/v1/organizations/${organizationId}`, { headers: { cookie: cookieHeader(owner) } });
    expect(cookie.status).toBe(200);
    expect(cookie.headers.get('cache-control')).toBe('no-store');
  });
});

describe('log lines', () => {
  it('mask the checkout client secret in the cross-origin refusal warning', async () => {
    const secret = 'polar_c_crosssitesecretvalue0123456789';
    const res = await fetch(`${daemon.url}/checkout/${secret}`, {
      method: 'POST',
      headers: { origin: otherPort(), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=a%40b.c',
    });
    expect(res.status).toBe(403);
    const warning = daemon.logs.find((line) => line.msg === 'cross-origin form post refused');
    expect(warning).toBeDefined();
    expect(warning!.path).toBe('/checkout/***');
    expect(JSON.stringify(daemon.logs)).not.toContain(secret);
  });
});
