import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { tillOnTerminal } from '../../testing/catalog.js';
import { loginAs, tempConfigDir, till } from '../../testing/till.js';

/*
 * till plan and apply as a person runs them: signed in through the device flow (a session stored by `till login`,
 * no token), on a terminal (a coloured plan and a question; no answers "nothing was changed") and off one (no
 * colour, and apply refuses without --yes).
 */

const CATALOG = `version: 1
benefits:
  - key: support
    type: custom
    description: Priority support
products:
  - key: pro
    name: Pro
    recurring_interval: month
    prices:
      - { amount_type: fixed, price_amount: 1500, price_currency: usd }
    benefits: [support]
discounts:
  - key: launch
    name: Launch week
    type: percentage
    basis_points: 2000
    duration: once
    products: [pro]
`;

let daemon: TestDaemon;
let env: Record<string, string>;
let owner: { token: string };
let organizationId: string;
let slug: string;
let file: string;

const api = async (path: string) => (await fetch(`${daemon.url}${path}`, { headers: { authorization: `Bearer ${owner.token}` } })).json();
const products = async () => (await api(`/v1/products/?organization_id=${organizationId}&limit=100`)).items as { name: string }[];

beforeAll(async () => {
  daemon = await startTestDaemon({ TILL_DEVICE_CODE_INTERVAL: '1s' });
  const dir = tempConfigDir();
  // `till login`: the device flow, approved by the user signed in on the web; the CLI keeps its own session.
  const login = await loginAs(daemon.url, dir, 'Catalog Person');
  expect(login.result.exitCode).toBe(0);
  owner = login.user;
  const created = await fetch(`${daemon.url}/api/auth/organization/create`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json', origin: daemon.url },
    body: JSON.stringify({ name: 'Signed In Co', slug: (slug = `signed-in-${Date.now().toString(36)}`) }),
  });
  expect(created.status).toBe(200);
  organizationId = (await created.json()).id;
  // No TILL_TOKEN and no TILL_SERVER: the stored session of `till login` is what `till` uses.
  env = { TILL_CONFIG_DIR: dir };
  file = join(mkdtempSync(join(tmpdir(), 'till-catalog-session-')), 'catalog.yaml');
  writeFileSync(file, CATALOG);
});
afterAll(async () => {
  await daemon?.close();
});

describe('till plan and apply signed in through the device flow', { timeout: 300_000 }, () => {
  it('plans off a terminal without colour, and refuses to apply without --yes, changing nothing', async () => {
    const planned = await till(['plan', file], env);
    expect(planned.exitCode).toBe(10);
    expect(planned.stdout).toContain('+ create product pro');
    expect(planned.stdout + planned.stderr).not.toContain('\x1b[');

    const refused = await till(['apply', file], env);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('Refusing to apply without --yes');
    expect(refused.stderr).not.toContain('\x1b[');
    expect(await products()).toEqual([]);
  });

  it('shows the plan in colour on a terminal, asks, and changes nothing when the answer is no', async () => {
    const planned = await tillOnTerminal(['plan', file], env);
    expect(planned.exitCode).toBe(10);
    // create is green.
    expect(planned.stdout).toContain('\x1b[32m  + create product pro');

    const declined = await tillOnTerminal(['apply', file], env, [['Apply these changes?', 'n\r']]);
    expect(declined.exitCode).toBe(1);
    expect(declined.stdout).toContain('\x1b[32m  + create product pro');
    expect(declined.stdout).toContain('Nothing was changed.');
    expect(await products()).toEqual([]);
    expect((await api(`/v1/catalog/keys?organization_id=${organizationId}`)).items).toEqual([]);
  });

  it('applies on a terminal when the answer is yes, then plan and apply say there is nothing to change', async () => {
    const applied = await tillOnTerminal(['apply', file], env, [['Apply these changes?', 'y\r']]);
    expect(applied.exitCode).toBe(0);
    expect(applied.stdout).toContain('Applied 3 changes.');
    expect((await products()).map((product) => product.name)).toEqual(['Pro']);
    const keys = (await api(`/v1/catalog/keys?organization_id=${organizationId}`)).items.map((binding: { kind: string; key: string }) => `${binding.kind}:${binding.key}`);
    expect(keys.sort()).toEqual(['benefit:support', 'discount:launch', 'product:pro']);

    const plan = await till(['plan', file, '--json'], env);
    expect(plan.exitCode).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ organization_id: organizationId, changes_pending: false, steps: [] });
    const again = await till(['apply', file], env);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('Nothing to change');
  });

  it('applies an edit with --yes off a terminal, signed in, and pull then plan is empty', async () => {
    const edited = join(mkdtempSync(join(tmpdir(), 'till-catalog-session-')), 'catalog.yaml');
    writeFileSync(edited, CATALOG.replace('basis_points: 2000', 'basis_points: 2500'));
    const applied = await till(['apply', edited, '--yes', '--json'], env);
    expect(applied.exitCode).toBe(0);
    expect(JSON.parse(applied.stdout).applied).toEqual([{ action: 'update', kind: 'discount', key: 'launch', id: expect.any(String) }]);

    const pulled = join(mkdtempSync(join(tmpdir(), 'till-catalog-session-')), 'pulled.yaml');
    expect((await till(['pull', '--output', pulled], env)).exitCode).toBe(0);
    expect((await till(['plan', pulled], env)).exitCode).toBe(0);
  });

  it('needs --org (or TILL_ORG) once the user has several organizations, and plans the one named', async () => {
    const second = await fetch(`${daemon.url}/api/auth/organization/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json', origin: daemon.url },
      body: JSON.stringify({ name: 'Second Co', slug: `${slug}-second` }),
    });
    expect(second.status).toBe(200);
    const unnamed = await till(['plan', file], env);
    expect(unnamed.exitCode).toBe(2);
    expect(unnamed.stderr).toContain('several organizations');
    for (const named of [await till(['plan', file, '--org', slug, '--json'], env), await till(['plan', file, '--json'], { ...env, TILL_ORG: slug })]) {
      expect(JSON.parse(named.stdout).organization_id).toBe(organizationId);
    }
    // The other organization is empty: everything to create.
    const other = await till(['plan', file, '--org', `${slug}-second`, '--json'], env);
    expect(other.exitCode).toBe(10);
    expect(JSON.parse(other.stdout).steps.map((step: { action: string }) => step.action)).toEqual(['create', 'create', 'create']);
  });
});
