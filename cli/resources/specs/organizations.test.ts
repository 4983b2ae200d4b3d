import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { signUp } from '../../../daemon/testing/auth-client.js';
import { createOrganization, seller, tillJson, type Seller } from '../../testing/catalog.js';
import { tempConfigDir, till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;
let second: { organizationId: string; slug: string };

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Acme');
  second = await createOrganization(acme.user, 'Second Shop');
});
afterAll(() => daemon?.close());

describe('till orgs', () => {
  it('lists the organizations the user belongs to, as {items, pagination} with --json', async () => {
    const list = await tillJson(['orgs', 'list'], acme.env);
    expect(list.pagination).toEqual({ total_count: 2, max_page: 1 });
    expect(list.items.map((org: { id: string }) => org.id).sort()).toEqual([acme.organizationId, second.organizationId].sort());
  });

  it('lists them as tab-separated lines, without a header, off a terminal', async () => {
    const result = await till(['orgs', 'list', '--sort', 'name'], acme.env);
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]!.split('\t').slice(0, 3)).toEqual([acme.organizationId, acme.slug, 'Acme']);
  });

  it('gets an organization by slug or by id', async () => {
    const bySlug = await tillJson(['orgs', 'get', second.slug], acme.env);
    expect(bySlug).toMatchObject({ id: second.organizationId, slug: second.slug, name: 'Second Shop' });
    const byId = await tillJson(['orgs', 'get', second.organizationId], acme.env);
    expect(byId.id).toBe(second.organizationId);
  });

  it('exits 4 for an organization the user does not reach', async () => {
    const stranger = await seller(daemon, 'Stranger');
    const bySlug = await till(['orgs', 'get', stranger.slug, '--json'], acme.env);
    expect(bySlug.exitCode).toBe(4);
    expect(JSON.parse(bySlug.stderr).error.code).toBe('ORGANIZATION_NOT_FOUND');
    const byId = await till(['orgs', 'get', stranger.organizationId, '--json'], acme.env);
    expect(byId.exitCode).toBe(4);
  });

  it('updates the fields given and leaves the others alone', async () => {
    const updated = await tillJson(['orgs', 'update', second.slug, '--email', 'billing@second.example', '--website', 'https://second.example', '--social', 'github=https://github.com/second'], acme.env);
    expect(updated).toMatchObject({ id: second.organizationId, name: 'Second Shop', email: 'billing@second.example', website: 'https://second.example', socials: [{ platform: 'github', url: 'https://github.com/second' }] });
    const again = await tillJson(['orgs', 'update', second.organizationId, '--name', 'Second Store'], acme.env);
    expect(again).toMatchObject({ name: 'Second Store', email: 'billing@second.example' });
  });

  it('lists the field errors of a refused update and exits 5', async () => {
    const result = await till(['orgs', 'update', second.slug, '--email', 'not-an-email'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toMatch(/rejected the request:\n {2}email \(--email\): /);
  });

  it('makes an organization the default with `orgs use`, which later commands then work in', async () => {
    // A stored session, as `till login` leaves it: the config file is where the default lives.
    const dir = tempConfigDir();
    writeFileSync(`${dir}/config.json`, JSON.stringify({ current_server: daemon.url, profiles: { [daemon.url]: { token: acme.user.token, signed_in_at: new Date().toISOString() } } }));
    const env = { TILL_CONFIG_DIR: dir };

    const used = await tillJson(['orgs', 'use', second.slug], env);
    expect(used).toEqual({ server: daemon.url, organization: { id: second.organizationId, slug: second.slug, name: expect.any(String) } });
    expect(JSON.parse(readFileSync(`${dir}/config.json`, 'utf8')).default_organizations[daemon.url].id).toBe(second.organizationId);

    expect((await tillJson(['orgs', 'get'], env)).id).toBe(second.organizationId);
    const customer = await tillJson(['customers', 'create', '--email', 'default-org@example.com'], env);
    expect(customer.organization_id).toBe(second.organizationId);
    const listed = await tillJson(['customers', 'list'], env);
    expect(listed.items.map((item: { id: string }) => item.id)).toEqual([customer.id]);

    const cleared = await tillJson(['orgs', 'use', '--clear'], env);
    expect(cleared.organization).toBeNull();
    const none = await till(['orgs', 'get'], env);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('Missing the <org> argument');
  });

  it('lets --org override the organization_id of --data', async () => {
    const created = await tillJson(['customers', 'create', '--data', JSON.stringify({ email: 'data-org@example.com', organization_id: acme.organizationId }), '--org', second.slug], acme.env);
    expect(created.organization_id).toBe(second.organizationId);
  });

  it('lets --org and TILL_ORG pick the organization over the default', async () => {
    const created = await tillJson(['customers', 'create', '--email', 'by-flag@example.com', '--org', acme.slug], acme.env);
    expect(created.organization_id).toBe(acme.organizationId);
    const byEnv = await tillJson(['customers', 'create', '--email', 'by-env@example.com'], { ...acme.env, TILL_ORG: second.slug });
    expect(byEnv.organization_id).toBe(second.organizationId);
  });

  it('refuses `orgs use` for an organization the user does not reach, and stores nothing', async () => {
    const dir = tempConfigDir();
    const result = await till(['orgs', 'use', 'no-such-org', '--json'], { ...acme.env, TILL_CONFIG_DIR: dir });
    expect(result.exitCode).toBe(4);
    expect(() => readFileSync(`${dir}/config.json`, 'utf8')).toThrow();
  });
});

describe('till orgs create', () => {
  /** A new user with no organization, signed in the way `till login` leaves it (a stored session). */
  async function newcomer() {
    const user = await signUp(daemon.url, { name: 'Nina Newcomer' });
    const dir = tempConfigDir();
    writeFileSync(`${dir}/config.json`, JSON.stringify({ current_server: daemon.url, profiles: { [daemon.url]: { token: user.token, signed_in_at: new Date().toISOString() } } }));
    return { user, dir, env: { TILL_CONFIG_DIR: dir } };
  }

  it('creates the first organization with a slug made from the name, and makes it the default', async () => {
    const { dir, env } = await newcomer();
    const name = `Nova Shop ${Date.now()}`;
    const result = await till(['orgs', 'create', name], env);
    expect(result.exitCode).toBe(0);
    const slug = name.toLowerCase().replace(/ /g, '-');
    expect(result.stdout).toContain(`Created ${name} (${slug}); you are its owner.`);
    expect(result.stdout).toContain('It is your first organization');
    const stored = JSON.parse(readFileSync(`${dir}/config.json`, 'utf8')).default_organizations[daemon.url];
    expect(stored).toMatchObject({ slug, name });
    // Catalog commands now work in it without --org.
    const customer = await tillJson(['customers', 'create', '--email', 'first-org@example.com'], env);
    expect(customer.organization_id).toBe(stored.id);
  });

  it('takes --slug, and leaves the default alone for a second organization', async () => {
    const { dir, env } = await newcomer();
    const first = await tillJson(['orgs', 'create', 'First Things'], env);
    expect(first.default).toBe(true);
    const slug = `second-${Date.now()}`;
    const second = await tillJson(['orgs', 'create', 'Second Things', '--slug', slug], env);
    expect(second).toMatchObject({ slug, name: 'Second Things', default: false });
    expect(JSON.parse(readFileSync(`${dir}/config.json`, 'utf8')).default_organizations[daemon.url].id).toBe(first.id);
  });

  it('refuses a bad slug naming --slug, exits 5, and creates nothing', async () => {
    const { user, env } = await newcomer();
    const result = await till(['orgs', 'create', 'Slash Shop', '--slug', 'slash/shop'], env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toMatch(/slug \(--slug\): Use lowercase letters, digits and hyphens only/);
    expect(await daemon.db('member').where({ userId: user.user.id })).toHaveLength(0);
  });
});
