import { Polar } from '@polar-sh/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../../testing/daemon.js';
import { createOrganization } from '../../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;

const get = (path: string, headers: Record<string, string> = {}, token: string | undefined = owner.token) =>
  fetch(`${daemon.url}/v1${path}`, { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Vera Version' });
  await createOrganization(owner, 'Versioned');
});
afterAll(async () => {
  await daemon?.close();
});

describe('Polar-Version', () => {
  it('answers a request without the header in the current version, 2026-04, and says so', async () => {
    const res = await get('/products/');
    expect(res.status).toBe(200);
    expect(res.headers.get('polar-version')).toBe('2026-04');
  });

  it('answers each version Polar serves in that version', async () => {
    for (const version of ['2026-04', '2026-10']) {
      const res = await get('/products/', { 'Polar-Version': version });
      expect(res.status).toBe(200);
      expect(res.headers.get('polar-version')).toBe(version);
    }
  });

  it('refuses an unknown or malformed version with a 404 naming the versions served, before authentication', async () => {
    for (const version of ['2025-01', '2027-13', 'latest']) {
      const res = await get('/products/', { 'Polar-Version': version }, undefined);
      expect(res.status).toBe(404);
      const body = await res.json();
      expect(body).toMatchObject({ error: 'ResourceNotFound', code: 'UNSUPPORTED_API_VERSION' });
      expect(body.detail).toContain(version);
      expect(body.detail).toContain('2026-04, 2026-10');
    }
  });

  it('leaves what the 0.49 SDK reads unchanged when no version is sent', async () => {
    const products = await new Polar({ accessToken: owner.token, serverURL: daemon.url }).products.list({});
    expect(products.result.items).toEqual([]);
  });
});
