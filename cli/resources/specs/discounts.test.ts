import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';
import { discountAmount } from './discounts.js';

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Discount Shop');
});
afterAll(() => daemon?.close());

describe('till discounts, scripted with --json', () => {
  it('creates, gets, lists, updates and deletes a percentage discount for some months', async () => {
    const product = await tillJson(['products', 'create', '--name', 'Pro', '--price', '1500:usd:month'], acme.env);
    const created = await tillJson(['discounts', 'create', '--name', 'Launch', '--amount', '12.5%', '--months', '3', '--code', 'LAUNCH25', '--max-redemptions', '100', '--ends-at', '2099-01-31', '--product', product.id], acme.env);
    expect(created).toMatchObject({
      name: 'Launch',
      type: 'percentage',
      basis_points: 1250,
      duration: 'repeating',
      duration_in_months: 3,
      code: 'LAUNCH25',
      max_redemptions: 100,
      redemptions_count: 0,
      organization_id: acme.organizationId,
      products: [expect.objectContaining({ id: product.id })],
    });
    expect(new Date(created.ends_at).toISOString()).toBe('2099-01-31T00:00:00.000Z');
    expect(await tillJson(['discounts', 'get', created.id], acme.env)).toEqual(created);
    const listed = await tillJson(['discounts', 'list', '--query', 'Launch'], acme.env);
    expect(listed.items.map((discount: { id: string }) => discount.id)).toEqual([created.id]);

    const updated = await tillJson(['discounts', 'update', created.id, '--name', 'Launch week', '--ends-at', 'none'], acme.env);
    expect(updated).toMatchObject({ name: 'Launch week', ends_at: null });

    expect(await tillJson(['discounts', 'delete', created.id, '--yes'], acme.env)).toEqual({ id: created.id, deleted: true });
    expect((await till(['discounts', 'get', created.id], acme.env)).exitCode).toBe(4);
  });

  it('creates a fixed discount from --amount 500:usd', async () => {
    const created = await tillJson(['discounts', 'create', '--name', 'Five off', '--amount', '500:usd', '--duration', 'once'], acme.env);
    expect(created).toMatchObject({ type: 'fixed', amount: 500, currency: 'usd', amounts: { usd: 500 }, duration: 'once' });
  });

  it('exits 2 naming every missing flag off a terminal', async () => {
    const result = await till(['discounts', 'create', '--json'], acme.env);
    expect(result.exitCode).toBe(2);
    expect(JSON.parse(result.stderr).error.message).toBe('Missing --name, --amount, --duration (needed to create a discount).');
  });
});

describe('--amount', () => {
  it('reads percentages to basis points and fixed amounts in minor units', () => {
    expect(discountAmount('10%')).toEqual({ type: 'percentage', basis_points: 1000 });
    expect(discountAmount('0.01%')).toEqual({ type: 'percentage', basis_points: 1 });
    expect(discountAmount('500:USD')).toEqual({ type: 'fixed', amount: 500, currency: 'usd' });
    expect(() => discountAmount('101%')).toThrow('a percentage is from 0.01% to 100%');
    expect(() => discountAmount('5.00')).toThrow('--amount "5.00"');
  });
});
