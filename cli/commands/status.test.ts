import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { deadServer, signUp, tempConfigDir, till } from '../testing/till.js';
import { createOrganization, seller } from '../testing/catalog.js';

const version = (await import('../../package.json', { with: { type: 'json' } })).default.version;

describe('till status', () => {
  let daemon: TestDaemon;
  beforeAll(async () => {
    daemon = await startTestDaemon({ TILL_DEVICE_CODE_INTERVAL: '1s' });
  });
  afterAll(() => daemon?.close());

  it('reports the server, its database, both versions and the signed-in user as JSON', async () => {
    const user = await signUp(daemon.url, 'Ada Lovelace');
    const result = await till(['status', '--json'], { TILL_CONFIG_DIR: tempConfigDir(), TILL_SERVER: daemon.url, TILL_TOKEN: user.token });

    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      server: daemon.url,
      reachable: true,
      database: 'ok',
      server_version: version,
      cli_version: version,
      signed_in: true,
      user: { id: expect.any(String), email: user.email, name: 'Ada Lovelace', role: expect.any(String) },
      access_token: null,
      token_source: 'env',
      payments: [],
    });
  });

  it('says "not signed in" without failing when there is no session', async () => {
    const result = await till(['status', '--server', daemon.url], { TILL_CONFIG_DIR: tempConfigDir() });

    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(`Server     ${daemon.url}  ✓ reachable`);
    expect(result.stdout).toContain('Database   ✓ ready');
    expect(result.stdout).toContain(`Versions   server ${version} · cli ${version}`);
    expect(result.stdout).toContain('Signed in  not signed in');
  });

  it('still reports, and exits 8, when the server cannot be reached', async () => {
    const server = await deadServer();
    const result = await till(['status', '--json'], { TILL_CONFIG_DIR: tempConfigDir(), TILL_SERVER: server, TILL_TOKEN: 'whatever' });

    expect(result.exitCode).toBe(8);
    expect(JSON.parse(result.stdout)).toMatchObject({ server, reachable: false, database: null, server_version: null, signed_in: null, user: null });
  });
});

describe('till status on a server that takes real money through Stripe only', () => {
  let daemon: TestDaemon;
  beforeAll(async () => {
    daemon = await startTestDaemon({ TILL_SANDBOX_ONLY: '0' });
  });
  afterAll(() => daemon?.close());

  it('says which organizations are sandbox and which cannot be paid without Stripe, and one named with --org only', async () => {
    const shop = await seller(daemon, 'Unpaid Shop');
    const tests = await createOrganization(shop.user, 'Test Shop');
    const marked = await fetch(`${daemon.url}/v1/organizations/${tests.organizationId}/clock`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${shop.user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sandbox: true }),
    });
    expect(marked.status).toBe(200);

    const all = await till(['status', '--json'], shop.env);
    expect(all.exitCode).toBe(0);
    expect(JSON.parse(all.stdout).payments).toEqual(
      expect.arrayContaining([
        { organization_id: shop.organizationId, name: 'Unpaid Shop', slug: shop.slug, mode: 'not_configured' },
        { organization_id: tests.organizationId, name: 'Test Shop', slug: tests.slug, mode: 'sandbox' },
      ]),
    );

    const text = await till(['status'], { ...shop.env, NO_COLOR: '1' });
    expect(text.stdout).toMatch(/^Payments +\S+: /m);
    expect(text.stdout).toContain(`${shop.slug}: not configured: paid checkouts are refused`);
    expect(text.stdout).toContain(`${tests.slug}: sandbox (test cards, no real money)`);

    const one = await till(['status', '--json', '--org', tests.slug], shop.env);
    expect(JSON.parse(one.stdout).payments).toEqual([{ organization_id: tests.organizationId, name: 'Test Shop', slug: tests.slug, mode: 'sandbox' }]);
  });
});
