import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';
import { expiresIn } from './access-tokens.js';

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Token Shop');
});
afterAll(() => daemon?.close());

describe('till tokens', () => {
  it('creates a token and prints it alone on stdout, once, with the warning on stderr', async () => {
    const result = await till(['tokens', 'create', '--comment', 'deploys', '--scope', 'products:read', '--org', acme.slug], acme.env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^till_oat_[A-Za-z0-9_-]+$/);
    expect(result.stderr).toContain('not shown again');
    const list = await tillJson(['tokens', 'list'], acme.env);
    expect(JSON.stringify(list)).not.toContain(result.stdout);
  });

  it('answers the API object with --json: the token record and the token', async () => {
    const created = await tillJson(['tokens', 'create', '--comment', 'ci', '--scope', 'products:read,customers:write', '--expires-in', '30d'], acme.env);
    expect(created).toEqual({
      organization_access_token: expect.objectContaining({ comment: 'ci', scopes: ['products:read', 'customers:write'], organization_id: acme.organizationId }),
      token: expect.stringMatching(/^till_oat_/),
    });
    const expires = new Date(created.organization_access_token.expires_at).getTime() - Date.now();
    expect(Math.abs(expires - 30 * 86_400_000)).toBeLessThan(60_000);
  });

  it('gives a token that works as TILL_TOKEN within its scopes, and is refused outside them (exit 1)', async () => {
    const { token } = await tillJson(['tokens', 'create', '--comment', 'reader', '--scope', 'customers:read'], acme.env);
    const asToken = { TILL_SERVER: daemon.url, TILL_TOKEN: token, TILL_CONFIG_DIR: acme.env.TILL_CONFIG_DIR! };
    const listed = await till(['customers', 'list', '--json'], asToken);
    expect(listed.exitCode).toBe(0);
    expect(JSON.parse(listed.stdout).pagination).toBeDefined();

    const write = await till(['customers', 'create', '--email', 'nope@example.com', '--json'], asToken);
    expect(write.exitCode).toBe(1);
    expect(JSON.parse(write.stderr).error.code).toBe('INSUFFICIENT_SCOPE');
  });

  it('lists tokens as a table off a terminal: tab-separated, comment and scopes', async () => {
    const created = await tillJson(['tokens', 'create', '--comment', 'table', '--scope', 'files:read'], acme.env);
    const result = await till(['tokens', 'list', '--limit', '100'], acme.env);
    const line = result.stdout.split('\n').find((row) => row.startsWith(created.organization_access_token.id));
    expect(line?.split('\t')).toEqual([created.organization_access_token.id, 'table', 'files:read', 'never', 'never']);
  });

  it('updates the comment and replaces the scopes', async () => {
    const created = await tillJson(['tokens', 'create', '--comment', 'old', '--scope', 'files:read'], acme.env);
    const updated = await tillJson(['tokens', 'update', created.organization_access_token.id, '--comment', 'new', '--scope', 'files:write'], acme.env);
    expect(updated).toMatchObject({ id: created.organization_access_token.id, comment: 'new', scopes: ['files:write'] });
  });

  it('refuses to delete off a terminal without --yes (exit 2, naming the flag), and deletes with it', async () => {
    const created = await tillJson(['tokens', 'create', '--comment', 'doomed', '--scope', 'customers:read'], acme.env);
    const id = created.organization_access_token.id;
    const refused = await till(['tokens', 'delete', id, '--json'], acme.env);
    expect(refused.exitCode).toBe(2);
    expect(JSON.parse(refused.stderr).error).toMatchObject({ code: 'CONFIRMATION_REQUIRED', message: expect.stringContaining('--yes') });
    expect((await till(['customers', 'list'], { ...acme.env, TILL_TOKEN: created.token })).exitCode).toBe(0);

    const deleted = await tillJson(['tokens', 'delete', id, '--yes'], acme.env);
    expect(deleted).toEqual({ id, deleted: true });
    const afterwards = await till(['customers', 'list', '--json'], { ...acme.env, TILL_TOKEN: created.token });
    expect(afterwards.exitCode).toBe(3);
  });

  it('exits 2 naming --comment and --scope when they are missing off a terminal', async () => {
    const result = await till(['tokens', 'create', '--json'], acme.env);
    expect(result.exitCode).toBe(2);
    expect(JSON.parse(result.stderr).error).toEqual({ code: 'MISSING_ARGUMENT', message: 'Missing --comment, --scope (needed to create an access token).' });
  });

  it('exits 5 and names the scope the server does not know', async () => {
    const result = await till(['tokens', 'create', '--comment', 'x', '--scope', 'root:everything'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('scopes.0 (--scope)');
  });
});

describe('--expires-in', () => {
  it('reads seconds, short units, ISO 8601 durations and never', () => {
    expect(expiresIn('3600')).toBe(3600);
    expect(expiresIn('30d')).toBe(2_592_000);
    expect(expiresIn('12h')).toBe(43_200);
    expect(expiresIn('2w')).toBe(1_209_600);
    expect(expiresIn('p30d')).toBe('P30D');
    expect(expiresIn('never')).toBeNull();
    expect(() => expiresIn('soon')).toThrow(/--expires-in "soon"/);
  });
});
