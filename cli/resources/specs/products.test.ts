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
    // The failure's hint names the product made (no separate "Created" note: a create prints one summary, on success).
    const id = /The product was created as ([0-9a-f-]{36});/.exec(result.stderr)?.[1];
    expect(id).toBeDefined();
    expect((await tillJson(['products', 'get', id!], acme.env)).name).toBe('Half done');
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

describe('till products without --json: a line saying what changed, the object only with --json', () => {
  it('prints one line for create, update and archive, with the name and the id', async () => {
    const env = { ...acme.env, NO_COLOR: '1' };
    const created = await till(['products', 'create', '--name', 'Summary Pro', '--price', '1500:usd:month'], env);
    expect(created.exitCode).toBe(0);
    const id = /^✓ Created product "Summary Pro" \(([0-9a-f-]{36})\)\.$/.exec(created.stdout)?.[1];
    expect(id, created.stdout).toBeDefined();
    expect(created.stderr).toBe('');
    const updated = await till(['products', 'update', id!, '--name', 'Summary Max'], env);
    expect(updated.stdout).toBe(`✓ Updated product "Summary Max" (${id}).`);
    const archived = await till(['products', 'archive', id!, '--yes'], env);
    expect(archived.stdout).toBe(`✓ Archived product "Summary Max" (${id}).`);
    // `get` still shows the whole object.
    expect((await till(['products', 'get', id!], env)).stdout).toMatch(/^id +\S+$/m);
  });
});

describe('--json FIELDS', () => {
  it('keeps only the fields named, on get, list and create', async () => {
    const created = await tillJson(['products', 'create', '--name', 'Fields Pro', '--price', '700:usd'], acme.env);
    const got = await till(['products', 'get', created.id, '--json', 'name,id,is_archived'], acme.env);
    expect(got.exitCode).toBe(0);
    expect(got.stdout).toBe(JSON.stringify({ name: 'Fields Pro', id: created.id, is_archived: false }));
    const listed = JSON.parse((await till(['products', 'list', '--query', 'Fields Pro', '--json=id,name'], acme.env)).stdout);
    expect(listed).toEqual({ items: [{ id: created.id, name: 'Fields Pro' }], pagination: { total_count: 1, max_page: 1 } });
    const made = await till(['customers', 'create', '--email', 'fields@example.com', '--json', 'email'], acme.env);
    expect(JSON.parse(made.stdout)).toEqual({ email: 'fields@example.com' });
  });

  it('exits 5 naming the fields there are when one is unknown', async () => {
    const created = await tillJson(['products', 'create', '--name', 'Typo Pro', '--price', '700:usd'], acme.env);
    const result = await till(['products', 'get', created.id, '--json', 'nmae'], acme.env);
    expect(result.exitCode).toBe(5);
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('UNKNOWN_JSON_FIELD');
    expect(error.message).toMatch(/no field "nmae" here\. Fields: .*\bname\b/);
  });
});
