import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Product Shop');
});
afterAll(() => daemon?.close());

describe('till products, scripted with --json', () => {
  it('creates, gets, lists, changes the prices of and archives a subscription product', async () => {
    const created = await tillJson(['products', 'create', '--name', 'Pro', '--description', 'Everything', '--price', '1500:usd:month', '--metadata', 'tier=pro', '--metadata', 'seats:=5'], acme.env);
    expect(created).toMatchObject({
      name: 'Pro',
      description: 'Everything',
      organization_id: acme.organizationId,
      recurring_interval: 'month',
      recurring_interval_count: 1,
      is_recurring: true,
      is_archived: false,
      metadata: { tier: 'pro', seats: 5 },
      prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd', is_archived: false }],
    });

    expect(await tillJson(['products', 'get', created.id], acme.env)).toEqual(created);
    const listed = await tillJson(['products', 'list', '--recurring', '--query', 'Pro'], acme.env);
    expect(listed.items.map((product: { id: string }) => product.id)).toContain(created.id);
    expect(listed.pagination.total_count).toBeGreaterThanOrEqual(1);

    const repriced = await tillJson(['products', 'update', created.id, '--name', 'Pro Plus', '--price', '2000:usd:month'], acme.env);
    expect(repriced.name).toBe('Pro Plus');
    expect(repriced.prices).toEqual([expect.objectContaining({ amount_type: 'fixed', price_amount: 2000 })]);
    expect(repriced.prices[0].id).not.toBe(created.prices[0].id);

    // A price id keeps that price; every other current price is archived.
    const kept = await tillJson(['products', 'update', created.id, '--price', repriced.prices[0].id], acme.env);
    expect(kept.prices.map((price: { id: string }) => price.id)).toEqual([repriced.prices[0].id]);

    const archived = await tillJson(['products', 'archive', created.id, '--yes'], acme.env);
    expect(archived).toMatchObject({ id: created.id, is_archived: true });
    const onSale = await tillJson(['products', 'list', '--no-archived', '--limit', '100'], acme.env);
    expect(onSale.items.map((product: { id: string }) => product.id)).not.toContain(created.id);
    const gone = await tillJson(['products', 'list', '--archived'], acme.env);
    expect(gone.items.map((product: { id: string }) => product.id)).toContain(created.id);
  });

  it('creates a free one-time product from --price 0:usd and a pay-what-you-want one from custom:MIN-MAX', async () => {
    const free = await tillJson(['products', 'create', '--name', 'Sampler', '--price', '0:usd'], acme.env);
    expect(free).toMatchObject({ is_recurring: false, recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 0 }] });
    const custom = await tillJson(['products', 'create', '--name', 'Tip jar', '--price', 'custom:500-5000@1000:usd'], acme.env);
    expect(custom.prices).toEqual([expect.objectContaining({ amount_type: 'custom', minimum_amount: 500, maximum_amount: 5000, preset_amount: 1000 })]);
  });

  it('refuses to change the billing interval through --price on update (exit 5), changing nothing', async () => {
    const created = await tillJson(['products', 'create', '--name', 'Monthly', '--price', '900:usd:month'], acme.env);
    const result = await till(['products', 'update', created.id, '--price', '9000:usd:year', '--json'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(JSON.parse(result.stderr).error.message).toContain('bills every month');
    expect((await tillJson(['products', 'get', created.id], acme.env)).prices[0].price_amount).toBe(900);
    // The same interval is fine.
    const same = await tillJson(['products', 'update', created.id, '--price', '1000:usd:month'], acme.env);
    expect(same.prices[0].price_amount).toBe(1000);
  });

  it('attaches benefits with --benefit, in order', async () => {
    const first = await tillJson(['benefits', 'create', '--type', 'custom', '--description', 'Priority support', '--note', 'Write to us'], acme.env);
    const second = await tillJson(['benefits', 'create', '--type', 'custom', '--description', 'Community access'], acme.env);
    const product = await tillJson(['products', 'create', '--name', 'Bundle', '--price', '4900:usd', '--benefit', second.id, '--benefit', first.id], acme.env);
    expect(product.benefits.map((benefit: { id: string }) => benefit.id)).toEqual([second.id, first.id]);
    const only = await tillJson(['products', 'update', product.id, '--benefit', first.id], acme.env);
    expect(only.benefits.map((benefit: { id: string }) => benefit.id)).toEqual([first.id]);
  });

  it('says the product was created when its benefits are then refused, so a rerun makes no second one', async () => {
    const result = await till(['products', 'create', '--name', 'Half done', '--price', '100:usd', '--benefit', '00000000-0000-4000-8000-000000000000'], acme.env);
    expect(result.exitCode).not.toBe(0);
    const id = /Created product ([0-9a-f-]{36})\./.exec(result.stderr)?.[1];
    expect(id).toBeDefined();
    expect(result.stderr).toContain(`The product was created as ${id}; fix --benefit with \`till products update ${id}\``);
  });

  it('sets a trial and attached custom fields on a recurring product', async () => {
    const field = await tillJson(['custom-fields', 'create', '--type', 'text', '--slug', 'company', '--name', 'Company'], acme.env);
    const product = await tillJson(['products', 'create', '--name', 'Team', '--price', '3000:usd:month', '--trial', '14days', '--custom-field', `${field.id}:required`], acme.env);
    expect(product).toMatchObject({ trial_interval: 'day', trial_interval_count: 14, attached_custom_fields: [{ custom_field_id: field.id, required: true, order: 0 }] });
  });

  it('lists the server\'s field errors with the flag to fix (exit 5)', async () => {
    const result = await till(['products', 'create', '--name', 'X', '--price', '1500:usd'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toMatch(/^ {2}name \(--name\): /m);
  });

  it('exits 2 naming --name and --price when they are missing off a terminal', async () => {
    const result = await till(['products', 'create', '--description', 'No name'], acme.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('Missing --name, --price (needed to create a product).');
  });

  it('refuses to archive off a terminal without --yes', async () => {
    const created = await tillJson(['products', 'create', '--name', 'Keep me', '--price', '100:usd'], acme.env);
    const result = await till(['products', 'archive', created.id], acme.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('Refusing to archive without --yes');
    expect((await tillJson(['products', 'get', created.id], acme.env)).is_archived).toBe(false);
  });

  it('exits 4 for a product that does not exist', async () => {
    const result = await till(['products', 'get', '00000000-0000-4000-8000-000000000000', '--json'], acme.env);
    expect(result.exitCode).toBe(4);
    expect(JSON.parse(result.stderr).error.code).toBeTruthy();
  });
});
