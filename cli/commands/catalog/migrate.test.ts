import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../../core/billing/shared/scopes.js';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { polarSdk } from '../../../daemon/testing/v1.js';
import { seller, type Seller } from '../../testing/catalog.js';
import { TILL_BIN, tillEnv } from '../../testing/till.js';

/*
 * A changed price in a catalog file: existing subscriptions stay on the price they have, unless the product
 * says `migrate_subscriptions: true`; then `till apply` moves them onto the current price (prorated as the
 * file or the organization says), and the next plan has nothing left to do.
 */

const catalog = (options: { pro: number; team: number; migratePro?: boolean; migrateTeam?: 'invoice' | 'prorate' }) => `version: 1
products:
  - key: pro
    name: Pro
    recurring_interval: month
    prices:
      - { amount_type: fixed, price_amount: ${options.pro}, price_currency: usd }
${options.migratePro ? '    migrate_subscriptions: true\n' : ''}  - key: team
    name: Team
    recurring_interval: month
    prices:
      - { amount_type: fixed, price_amount: ${options.team}, price_currency: usd }
${options.migrateTeam ? `    migrate_subscriptions: true\n    migration_proration_behavior: ${options.migrateTeam}\n` : ''}`;

let daemon: TestDaemon;
let shop: Seller;
let env: Record<string, string>;
const dir = mkdtempSync(join(tmpdir(), 'till-catalog-migrate-'));
let written = 0;

const till = (args: string[]) => execa(process.execPath, [TILL_BIN, ...args], { env: tillEnv(env), extendEnv: false, reject: false, timeout: 200_000 });
const fileOf = (text: string) => {
  const path = join(dir, `catalog-${++written}.yaml`);
  writeFileSync(path, text);
  return path;
};
const api = async (path: string) => (await fetch(`${daemon.url}${path}`, { headers: { authorization: `Bearer ${shop.user.token}` } })).json();
const product = async (name: string) => ((await api(`/v1/products/?organization_id=${shop.organizationId}&limit=100`)).items as { id: string; name: string; prices: { id: string; is_archived: boolean; price_amount: number }[] }[]).find((item) => item.name === name)!;
const subscription = (id: string) => api(`/v1/subscriptions/${id}`);
const planOf = async (file: string) => {
  const result = await till(['plan', file, '--json']);
  if (result.exitCode !== 0 && result.exitCode !== 10) throw new Error(`plan exited ${result.exitCode}: ${result.stderr}`);
  return { exitCode: result.exitCode, plan: JSON.parse(result.stdout) as { steps: { action: string; kind: string; key: string; changes: { field: string; from: any; to: any }[] }[] } };
};
const apply = async (file: string) => {
  const result = await till(['apply', file, '--yes']);
  if (result.exitCode !== 0) throw new Error(`apply exited ${result.exitCode}: ${result.stderr}\n${result.stdout}`);
  return result;
};

/** A subscription as a customer starts one: a checkout confirmed with a sandbox test card (set-up, not under test). */
async function subscribe(productId: string, email: string): Promise<string> {
  const sdk = polarSdk(daemon.url, shop.user.token);
  const checkout = await sdk.checkouts.create({ products: [productId], customerEmail: email });
  await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
  return (await sdk.checkouts.get({ id: checkout.id })).subscriptionId!;
}

let proSubscriptions: string[];
let teamSubscription: string;
let oldProPrice: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  shop = await seller(daemon, 'Migrate Co');
  const minted = await fetch(`${daemon.url}/v1/organization-access-tokens/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${shop.user.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ organization_id: shop.organizationId, comment: 'ci', scopes: SCOPES }),
  });
  env = { TILL_SERVER: daemon.url, TILL_TOKEN: (await minted.json()).token, TILL_CONFIG_DIR: shop.env.TILL_CONFIG_DIR };
  await apply(fileOf(catalog({ pro: 1500, team: 4900 })));
  const pro = await product('Pro');
  oldProPrice = pro.prices[0].id;
  proSubscriptions = [await subscribe(pro.id, 'pro-one@example.com'), await subscribe(pro.id, 'pro-two@example.com')];
  teamSubscription = await subscribe((await product('Team')).id, 'team@example.com');
});
afterAll(async () => {
  await daemon?.close();
});

describe('a changed price and the subscriptions on the old one', { timeout: 600_000 }, () => {
  it('leaves existing subscriptions on their price when the file does not say to migrate them', async () => {
    const file = fileOf(catalog({ pro: 1900, team: 4900 }));
    const human = await till(['plan', file]);
    expect(human.exitCode).toBe(10);
    expect(human.stdout).toContain('(archived; subscriptions stay on it)');
    await apply(file);

    const pro = await product('Pro');
    expect(pro.prices.filter((price) => !price.is_archived).map((price) => price.price_amount)).toEqual([1900]);
    for (const id of proSubscriptions) {
      const current = await subscription(id);
      expect(current.amount).toBe(1500);
      expect(current.prices.map((price: { id: string }) => price.id)).toEqual([oldProPrice]);
    }
    expect((await planOf(file)).exitCode).toBe(0);
  });

  it('moves them onto the current price once the file says migrate_subscriptions, and then plans nothing', async () => {
    const file = fileOf(catalog({ pro: 1900, team: 4900, migratePro: true }));
    const { exitCode, plan } = await planOf(file);
    expect(exitCode).toBe(10);
    expect(plan.steps).toHaveLength(1);
    expect(plan.steps[0]).toMatchObject({ action: 'migrate', kind: 'product', key: 'pro' });
    expect(plan.steps[0].changes.map((change) => [change.field, change.from.price_amount, change.to.price_amount]).sort()).toEqual(
      proSubscriptions.map((id) => [`subscription ${id}`, 1500, 1900]).sort(),
    );
    const human = await till(['plan', file]);
    expect(human.stdout).toContain('> migrate product pro');
    expect(human.stdout).toContain('Plan: 1 to migrate.');

    await apply(file);
    const newPrice = (await product('Pro')).prices.find((price) => !price.is_archived)!.id;
    for (const id of proSubscriptions) {
      const current = await subscription(id);
      expect(current).toMatchObject({ status: 'active', amount: 1900 });
      expect(current.prices.map((price: { id: string }) => price.id)).toEqual([newPrice]);
    }
    // The team subscription is not the file's to move.
    expect((await subscription(teamSubscription)).amount).toBe(4900);
    expect((await planOf(file)).exitCode).toBe(0);
    const again = await till(['apply', file, '--yes']);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('Nothing to change');
  });

  it('changes a price and migrates its subscriptions in one apply, invoicing the difference when the file says so', async () => {
    const file = fileOf(catalog({ pro: 1900, team: 5900, migratePro: true, migrateTeam: 'invoice' }));
    const { plan } = await planOf(file);
    expect(plan.steps.map((step) => `${step.action} ${step.kind}:${step.key}`)).toEqual(['update product:team', 'migrate product:team']);
    expect(plan.steps[1].changes).toEqual([
      { field: `subscription ${teamSubscription}`, from: { amount_type: 'fixed', price_amount: 4900, price_currency: 'usd', tax_behavior: null }, to: { amount_type: 'fixed', price_amount: 5900, price_currency: 'usd', tax_behavior: null } },
    ]);
    await apply(file);

    const team = await product('Team');
    const current = await subscription(teamSubscription);
    expect(current.amount).toBe(5900);
    expect(current.prices.map((price: { id: string }) => price.id)).toEqual([team.prices.find((price) => !price.is_archived)!.id]);
    // invoice: the rest of the period at the new price is charged now, on an order of its own.
    const orders = (await api(`/v1/orders/?subscription_id=${teamSubscription}&limit=100`)).items as { billing_reason: string }[];
    expect(orders.map((order) => order.billing_reason).sort()).toEqual(['subscription_create', 'subscription_update']);
    expect((await planOf(file)).exitCode).toBe(0);
  });

  it('pulls a file that plans nothing: migrate_subscriptions is the file’s instruction, not the product’s state', async () => {
    const pulled = join(dir, 'pulled.yaml');
    expect((await till(['pull', '--output', pulled])).exitCode).toBe(0);
    expect((await planOf(pulled)).exitCode).toBe(0);
  });
});
