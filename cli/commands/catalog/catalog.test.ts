import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guildTokenKey, mintGuildToken } from '../../../core/billing/benefits/guild-token.js';
import { SCOPES } from '../../../core/billing/shared/scopes.js';
import { uploadDownloadable } from '../../../daemon/testing/benefit-grants.js';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller } from '../../testing/catalog.js';
import { execa } from 'execa';
import { TILL_BIN, tillEnv } from '../../testing/till.js';

/*
 * The done-means test of issue 19, as CI runs it: the built `till` with an organization access token against
 * a real tilld. An empty organization gets every kind of object from one file; a second apply changes nothing;
 * three edits are planned and applied exactly; pull then plan is empty; a smaller file with --prune archives the rest.
 */

const SECRET = 'test-secret-test-secret-test-secret-0123';
const EXAMPLE = readFileSync(join(import.meta.dirname, '..', '..', '..', 'fixtures', 'catalog.example.yaml'), 'utf8');

let daemon: TestDaemon;
let env: Record<string, string>;
let organizationId: string;
let ownerToken: string;
const dir = mkdtempSync(join(tmpdir(), 'till-catalog-'));

/** The built `till` off a terminal; an apply makes many requests, so it gets longer than the usual 30 s on a loaded machine. */
const till = (args: string[], env: Record<string, string>) => execa(process.execPath, [TILL_BIN, ...args], { env: tillEnv(env), extendEnv: false, reject: false, timeout: 200_000 });

const write = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const api = async (path: string) => (await fetch(`${daemon.url}${path}`, { headers: { authorization: `Bearer ${ownerToken}` } })).json();
const planJson = async (file: string, extra: string[] = []) => {
  const result = await till(['plan', file, '--json', ...extra], env);
  if (result.exitCode !== 0 && result.exitCode !== 10) throw new Error(`plan exited ${result.exitCode}: ${result.stderr}`);
  return { exitCode: result.exitCode, plan: JSON.parse(result.stdout) };
};
const applyYes = async (file: string, extra: string[] = []) => {
  const result = await till(['apply', file, '--yes', ...extra], env);
  if (result.exitCode !== 0) throw new Error(`apply exited ${result.exitCode}: ${result.stderr}\n${result.stdout}`);
  return result;
};

beforeAll(async () => {
  daemon = await startTestDaemon({ TILL_WEBHOOKS_ALLOW_PRIVATE: '1', TILL_SECRET: SECRET });
  const shop = await seller(daemon, 'Catalog Co');
  organizationId = shop.organizationId;
  ownerToken = shop.user.token;
  const minted = await fetch(`${daemon.url}/v1/organization-access-tokens/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ organization_id: organizationId, comment: 'ci', scopes: SCOPES }),
  });
  const token = (await minted.json()).token;
  const fileId = await uploadDownloadable(daemon, token, organizationId, Buffer.from('%PDF-1.4 guide'));
  env = {
    TILL_SERVER: daemon.url,
    TILL_TOKEN: token,
    TILL_CONFIG_DIR: shop.env.TILL_CONFIG_DIR,
    WEBHOOK_SECRET: 'whsec_catalog_test_secret_0123456789abcdef',
    DISCORD_GUILD_TOKEN: mintGuildToken(guildTokenKey(SECRET), '123456789012345678'),
    GUIDE_FILE_ID: fileId,
  };
});
afterAll(async () => {
  await daemon?.close();
});

describe('till plan, apply and pull against a real tilld with an organization access token', { timeout: 600_000 }, () => {
  it('serves the catalog JSON Schema, the same as docs/catalog.schema.json', async () => {
    const served = await (await fetch(`${daemon.url}/v1/catalog/schema.json`)).json();
    expect(served).toEqual(JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'catalog.schema.json'), 'utf8')));
  });

  it('creates every object of the example file in an empty organization, then a second apply changes nothing', async () => {
    const file = write('catalog.yaml', EXAMPLE);
    const first = await planJson(file);
    expect(first.exitCode).toBe(10);
    const creates = first.plan.steps.filter((step: { action: string }) => step.action === 'create');
    expect(creates.map((step: { kind: string; key: string }) => `${step.kind}:${step.key}`).sort()).toEqual(
      [
        'meter:api-calls', 'custom_field:company', 'custom_field:seats', 'benefit:support', 'benefit:discord', 'benefit:source', 'benefit:guide', 'benefit:license',
        'benefit:api-credits', 'product:ebook', 'product:pro', 'product:team', 'product:tip-jar', 'discount:launch', 'discount:five-off', 'webhook:app', 'tax_rate:de', 'tax_rate:us-ny',
      ].sort(),
    );
    // Secrets come from the environment and never show in a plan.
    const human = await till(['plan', file], env);
    for (const secret of [env.DISCORD_GUILD_TOKEN, env.WEBHOOK_SECRET]) expect(JSON.stringify(first.plan) + human.stdout).not.toContain(secret);
    await applyYes(file);

    const products = (await api(`/v1/products/?organization_id=${organizationId}&limit=100`)).items;
    expect(products.map((p: { name: string }) => p.name).sort()).toEqual(['Pro', 'Team', 'The e-book', 'Tip jar']);
    const pro = products.find((p: { name: string }) => p.name === 'Pro');
    expect(pro.prices.map((price: { amount_type: string }) => price.amount_type).sort()).toEqual(['fixed', 'metered_unit']);
    expect(pro.benefits.map((b: { type: string }) => b.type).sort()).toEqual(['custom', 'discord', 'license_keys', 'meter_credit']);
    expect((await api(`/v1/benefits/?organization_id=${organizationId}&limit=100`)).items.map((b: { type: string }) => b.type).sort()).toEqual(
      ['custom', 'discord', 'downloadables', 'github_repository', 'license_keys', 'meter_credit'],
    );
    const launch = (await api(`/v1/discounts/?organization_id=${organizationId}&limit=100`)).items.find((d: { name: string }) => d.name === 'Launch week');
    expect(launch.products.map((p: { name: string }) => p.name).sort()).toEqual(['Pro', 'Team']);
    const endpoint = (await api(`/v1/webhooks/endpoints?organization_id=${organizationId}`)).items[0];
    expect(endpoint.secret).toBe(env.WEBHOOK_SECRET);
    expect((await api(`/v1/tax-rates?organization_id=${organizationId}`)).items).toHaveLength(2);

    const again = await till(['apply', file, '--yes'], env);
    expect(again.exitCode).toBe(0);
    expect(again.stdout + again.stderr).toContain('Nothing to change');
    expect((await planJson(file)).exitCode).toBe(0);
    expect((await api(`/v1/products/?organization_id=${organizationId}&limit=100`)).items).toHaveLength(4);
  });

  it('plans exactly an edited price, benefit and discount, and applies them: the old price archived', async () => {
    const edited = EXAMPLE.replace('price_amount: 1500', 'price_amount: 1900').replace('description: Priority support', 'description: Priority support, 24/7').replace('basis_points: 2000', 'basis_points: 2500');
    const file = write('edited.yaml', edited);
    const { exitCode, plan } = await planJson(file);
    expect(exitCode).toBe(10);
    const summary = plan.steps.map((step: { action: string; kind: string; key: string; changes: { field: string; from: unknown; to: unknown }[] }) => ({
      action: step.action,
      what: `${step.kind}:${step.key}`,
      changes: step.changes.map((change) => `${change.field}:${JSON.stringify(change.from)}→${JSON.stringify(change.to)}`),
    }));
    expect(summary).toEqual([
      { action: 'update', what: 'benefit:support', changes: ['description:"Priority support"→"Priority support, 24/7"'] },
      {
        action: 'update',
        what: 'product:pro',
        changes: [
          'price:{"amount_type":"fixed","price_amount":1500,"price_currency":"usd","tax_behavior":null}→null',
          'price:null→{"amount_type":"fixed","price_amount":1900,"price_currency":"usd","tax_behavior":null}',
        ],
      },
      { action: 'update', what: 'discount:launch', changes: ['basis_points:2000→2500'] },
    ]);
    const human = await till(['plan', file], env);
    expect(human.exitCode).toBe(10);
    expect(human.stdout).toContain('~ update product pro');
    expect(human.stdout).toContain('Plan: 3 to update.');

    await applyYes(file);
    expect((await planJson(file)).exitCode).toBe(0);
    const pro = (await api(`/v1/products/?organization_id=${organizationId}&limit=100`)).items.find((p: { name: string }) => p.name === 'Pro');
    expect(pro.prices.filter((price: { amount_type: string }) => price.amount_type === 'fixed').map((price: { price_amount: number }) => price.price_amount)).toEqual([1900]);
    write('catalog.yaml', edited);
  });

  it('pulls a file that plans nothing, in YAML and JSON', async () => {
    const pulled = join(dir, 'pulled.yaml');
    const result = await till(['pull', '--output', pulled], env);
    expect(result.exitCode).toBe(0);
    expect(readFileSync(pulled, 'utf8')).toContain('key: pro');
    for (const secret of [env.DISCORD_GUILD_TOKEN, env.WEBHOOK_SECRET]) expect(readFileSync(pulled, 'utf8')).not.toContain(secret);
    const { exitCode, plan } = await planJson(pulled);
    expect(plan.steps).toEqual([]);
    expect(exitCode).toBe(0);
    // Pulling again writes the same file, to the letter.
    const again = join(dir, 'pulled-again.yaml');
    expect((await till(['pull', '--output', again], env)).exitCode).toBe(0);
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(pulled, 'utf8'));
    const asJson = join(dir, 'pulled.json');
    expect((await till(['pull', '--output', asJson], env)).exitCode).toBe(0);
    expect((await planJson(asJson)).exitCode).toBe(0);
  });

  it('archives what a smaller file leaves out with --prune, and only then', async () => {
    const smaller = readFileSync(join(dir, 'catalog.yaml'), 'utf8')
      .replace(/  - key: tip-jar[\s\S]*?(?=\ndiscounts:)/, '')
      .replace(/  - key: five-off[\s\S]*?(?=\nwebhooks:)/, '')
      .replace(/\nwebhooks:[\s\S]*?(?=\ntax_rates:)/, '\nwebhooks: []\n');
    const file = write('smaller.yaml', smaller);
    const without = await planJson(file);
    expect(without.exitCode).toBe(0);
    expect(without.plan.untouched.map((item: { kind: string; key: string }) => `${item.kind}:${item.key}`).sort()).toEqual(['discount:five-off', 'product:tip-jar', 'webhook:app']);

    const pruned = await planJson(file, ['--prune']);
    expect(pruned.exitCode).toBe(10);
    expect(pruned.plan.steps.map((step: { action: string; kind: string; key: string }) => `${step.action} ${step.kind}:${step.key}`).sort()).toEqual(['archive discount:five-off', 'archive product:tip-jar', 'archive webhook:app']);
    await applyYes(file, ['--prune']);
    expect((await planJson(file, ['--prune'])).exitCode).toBe(0);
    const tipJar = (await api(`/v1/products/?organization_id=${organizationId}&limit=100&is_archived=true`)).items.find((p: { name: string }) => p.name === 'Tip jar');
    expect(tipJar.is_archived).toBe(true);
    const endpoint = (await api(`/v1/webhooks/endpoints?organization_id=${organizationId}`)).items[0];
    expect(endpoint.enabled).toBe(false);
    // Archived, never deleted: the discount is ended and still there.
    const fiveOff = (await api(`/v1/discounts/?organization_id=${organizationId}&limit=100`)).items.find((d: { name: string }) => d.name === 'Five off');
    expect(Date.parse(fiveOff.ends_at)).toBeLessThanOrEqual(Date.now());
  });

  it('edits a Discord benefit from a pulled file, which names no token: the benefit keeps its own', async () => {
    const pulled = join(dir, 'pulled-discord.yaml');
    expect((await till(['pull', '--output', pulled], env)).exitCode).toBe(0);
    const file = write('discord.yaml', readFileSync(pulled, 'utf8').replace("description: Members' Discord role", "description: Members' Discord roles"));
    const { plan } = await planJson(file);
    expect(plan.steps).toMatchObject([{ action: 'update', kind: 'benefit', key: 'discord', changes: [{ field: 'description' }] }]);
    await applyYes(file);
    expect((await planJson(file)).exitCode).toBe(0);
    const discord = (await api(`/v1/benefits/?organization_id=${organizationId}&limit=100`)).items.find((b: { type: string }) => b.type === 'discord');
    expect(discord.description).toBe("Members' Discord roles");
    expect(discord.properties.guild_token).toBe(env.DISCORD_GUILD_TOKEN);
  });
});
