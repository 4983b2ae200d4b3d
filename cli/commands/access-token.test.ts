import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { seller, type Seller } from '../testing/catalog.js';
import { tempConfigDir, till } from '../testing/till.js';

// CI's path: an organization access token in TILL_TOKEN, no `till login`, no config file.
describe('till with an organization access token in TILL_TOKEN', () => {
  let daemon: TestDaemon;
  let acme: Seller;
  let other: Seller;
  /** A token of Acme's holding only products:read: no organizations:read. */
  let productsOnly: { token: string; id: string; expires_at: string };
  const env = (token: string, extra: Record<string, string> = {}) => ({ TILL_SERVER: daemon.url, TILL_TOKEN: token, TILL_CONFIG_DIR: tempConfigDir(), ...extra });

  beforeAll(async () => {
    daemon = await startTestDaemon();
    acme = await seller(daemon, 'Acme');
    other = await seller(daemon, 'Globex');
    const res = await fetch(`${daemon.url}/v1/organization-access-tokens/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acme.user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ organization_id: acme.organizationId, comment: 'ci', scopes: ['products:read'], expires_in: 'P30D' }),
    });
    expect(res.status).toBe(201);
    const body = await res.json();
    productsOnly = { token: body.token, id: body.organization_access_token.id, expires_at: body.organization_access_token.expires_at };
  });
  afterAll(() => daemon?.close());

  it('whoami names the organization, the scopes and the expiry, as JSON', async () => {
    const result = await till(['whoami', '--json'], env(productsOnly.token));
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      server: daemon.url,
      user: null,
      access_token: {
        id: productsOnly.id,
        source: 'TILL_TOKEN',
        organization: { id: acme.organizationId, name: 'Acme', slug: acme.slug },
        scopes: ['products:read'],
        expires_at: productsOnly.expires_at,
      },
    });
  });

  it('whoami says so in words, never "run till login"', async () => {
    const result = await till(['whoami'], env(productsOnly.token));
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(`Using an organization access token from TILL_TOKEN on ${daemon.url}`);
    expect(result.stdout).toMatch(new RegExp(`organization +Acme \\(${acme.slug}, ${acme.organizationId}\\)`));
    expect(result.stdout).toMatch(/scopes +products:read/);
    expect(result.stdout).toContain(productsOnly.expires_at);
    expect(result.stdout + result.stderr).not.toContain('till login');
  });

  it('status reports the token in place of a signed-in user', async () => {
    const json = await till(['status', '--json'], env(productsOnly.token));
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      signed_in: true,
      user: null,
      token_source: 'env',
      access_token: { organization: { id: acme.organizationId, slug: acme.slug }, scopes: ['products:read'], expires_at: productsOnly.expires_at },
    });
    const human = await till(['status'], env(productsOnly.token));
    expect(human.stdout).toContain('Signed in  organization access token from TILL_TOKEN');
    expect(human.stdout).toMatch(/scopes +products:read/);
  });

  it('names a bad TILL_TOKEN as such in whoami, status and any command (exit 3)', async () => {
    const bad = 'till_oat_not-a-real-token';
    const whoami = await till(['whoami'], env(bad));
    expect(whoami.exitCode).toBe(3);
    expect(whoami.stderr).toContain(`✗ ${daemon.url} refused the organization access token in TILL_TOKEN: it is unknown, expired or revoked.`);
    expect(whoami.stderr).not.toContain('Run `till login`');

    const status = await till(['status'], env(bad));
    expect(status.exitCode).toBe(0);
    expect(status.stdout).toContain('the organization access token in TILL_TOKEN was refused');
    expect(status.stdout).not.toContain('till login');

    const list = await till(['products', 'list', '--json'], env(bad));
    expect(list.exitCode).toBe(3);
    expect(JSON.parse(list.stderr).error.code).toBe('INVALID_TILL_TOKEN');

    const session = await till(['whoami', '--json'], env('not-a-session'));
    expect(session.exitCode).toBe(3);
    expect(JSON.parse(session.stderr).error).toEqual({ code: 'INVALID_TILL_TOKEN', message: `${daemon.url} refused the session token in TILL_TOKEN: it is unknown, expired or revoked.` });
  });

  it('takes --org or TILL_ORG naming the token’s own organization, by slug or id, without organizations:read', async () => {
    for (const extra of [['--org', acme.slug], ['--org', acme.organizationId]]) {
      const result = await till(['products', 'list', ...extra, '--json'], env(productsOnly.token));
      expect([result.exitCode, result.stderr]).toEqual([0, '']);
      expect(JSON.parse(result.stdout)).toHaveProperty('items');
    }
    const byEnv = await till(['products', 'list', '--json'], env(productsOnly.token, { TILL_ORG: acme.slug }));
    expect(byEnv.exitCode).toBe(0);
  });

  it('refuses --org or TILL_ORG naming another organization as a usage error (exit 2)', async () => {
    const byFlag = await till(['products', 'list', '--org', other.slug], env(productsOnly.token));
    expect(byFlag.exitCode).toBe(2);
    expect(byFlag.stderr).toContain(`--org names organization "${other.slug}", but the access token in TILL_TOKEN belongs to Acme (${acme.slug}, ${acme.organizationId}).`);
    const byEnv = await till(['products', 'list', '--json'], env(productsOnly.token, { TILL_ORG: other.organizationId }));
    expect(byEnv.exitCode).toBe(2);
    expect(JSON.parse(byEnv.stderr).error.code).toBe('ORGANIZATION_MISMATCH');
  });
});
