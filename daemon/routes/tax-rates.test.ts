import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

async function tokenWith(scopes: string[]): Promise<string> {
  const res = await v1(owner.token, 'POST', '/organization-access-tokens/', { organization_id: organizationId, comment: scopes.join(' '), scopes });
  return (await res.json()).token;
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Tess Tax' });
  organizationId = await createOrganization(owner, 'Taxed Goods');
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/tax-rates', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    expect((await v1(undefined, 'GET', '/tax-rates')).status).toBe(401);
    expect((await v1(undefined, 'POST', '/tax-rates', { country: 'FR', basis_points: 2000 })).status).toBe(401);
  });

  it('creates, gets, lists and deletes a rate, the state written as billing addresses write it', async () => {
    const created = await v1(owner.token, 'POST', '/tax-rates', { country: 'ca', state: 'qc', basis_points: 1498 });
    expect(created.status).toBe(201);
    const rate = await created.json();
    expect(rate).toMatchObject({ organization_id: organizationId, country: 'CA', state: 'CA-QC', basis_points: 1498, modified_at: null });
    expect(await (await v1(owner.token, 'GET', `/tax-rates/${rate.id}`)).json()).toEqual(rate);
    const list = await (await v1(owner.token, 'GET', '/tax-rates?country=CA')).json();
    expect(list).toEqual({ items: [rate], pagination: { total_count: 1, max_page: 1 } });
    expect((await v1(owner.token, 'DELETE', `/tax-rates/${rate.id}`)).status).toBe(204);
    expect((await v1(owner.token, 'GET', `/tax-rates/${rate.id}`)).status).toBe(404);
  });

  it('refuses an unknown country, a state that is not one, and a rate above 100 %, with the field named', async () => {
    const cases: [unknown, string][] = [
      [{ country: 'XX', basis_points: 100 }, 'country'],
      [{ country: 'US', state: 'ZZ', basis_points: 100 }, 'state'],
      [{ country: 'FR', basis_points: 10_001 }, 'basis_points'],
      [{ country: 'FR', basis_points: -1 }, 'basis_points'],
    ];
    for (const [body, field] of cases) {
      const res = await v1(owner.token, 'POST', '/tax-rates', body);
      expect(res.status).toBe(422);
      expect((await res.json()).detail.map((d: { loc: string[] }) => d.loc.at(-1))).toContain(field);
    }
    expect((await (await v1(owner.token, 'GET', '/tax-rates')).json()).items).toEqual([]);
  });

  it('needs products:write to change rates; products:read may only read them', async () => {
    const reader = await tokenWith(['products:read']);
    expect((await v1(reader, 'GET', '/tax-rates')).status).toBe(200);
    expect((await v1(reader, 'POST', '/tax-rates', { country: 'DE', basis_points: 1900 })).status).toBe(403);
    const writer = await tokenWith(['products:write']);
    const created = await v1(writer, 'POST', '/tax-rates', { country: 'DE', basis_points: 1900 });
    expect(created.status).toBe(201);
    expect((await v1(reader, 'DELETE', `/tax-rates/${(await created.json()).id}`)).status).toBe(403);
  });
});
