import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPaidOrder } from '../../../core/billing/orders/testing.js';
import { systemClock } from '../../../core/clock.js';
import { createSandboxProcessor } from '../../../core/payments/sandbox.js';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, tillOnTerminal, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';
import { parseAmount } from '../../commands/refunds/create.js';

let daemon: TestDaemon;
let acme: Seller;
let customerId: string;

const paidOrder = () => seedPaidOrder(daemon.db, systemClock, createSandboxProcessor({ db: daemon.db }), { organizationId: acme.organizationId, customerId, label: 'Course', amount: 2000, taxAmount: 400 });
const lastJson = (screen: string) => {
  const line = screen.split(/\r?\n/).reverse().find((candidate) => candidate.includes('{"'))!;
  return JSON.parse(line.slice(line.indexOf('{"')));
};

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Refund Shop');
  customerId = (await tillJson(['customers', 'create', '--email', 'bo@example.com'], acme.env)).id;
});
afterAll(() => daemon?.close());

describe('till refunds, scripted with --json', () => {
  it('refunds half then all that is left, and lists the refunds', async () => {
    const { id } = await paidOrder();
    const half = await tillJson(['refunds', 'create', '--order', id, '--amount', '50%', '--reason', 'customer_request', '--comment', 'half', '--metadata', 'ticket=42', '--yes'], acme.env);
    expect(half).toMatchObject({ order_id: id, amount: 1000, tax_amount: 200, status: 'succeeded', metadata: { ticket: '42' } });
    expect(await tillJson(['orders', 'get', id], acme.env)).toMatchObject({ status: 'partially_refunded', refundable_amount: 1000 });
    const rest = await tillJson(['refunds', 'create', '--order', id, '--amount', 'all', '--reason', 'other', '--yes'], acme.env);
    expect(rest).toMatchObject({ amount: 1000, tax_amount: 200 });
    expect(await tillJson(['orders', 'get', id], acme.env)).toMatchObject({ status: 'refunded', refundable_amount: 0 });
    const listed = await tillJson(['refunds', 'list', '--order', id, '--succeeded', '--sort', 'created_at'], acme.env);
    expect(listed.items.map((refund: { id: string }) => refund.id)).toEqual([half.id, rest.id]);

    const nothing = await till(['refunds', 'create', '--order', id, '--amount', '1', '--reason', 'other', '--yes', '--json'], acme.env);
    expect(nothing.exitCode).toBe(5);
    expect(JSON.parse(nothing.stderr).error.message).toContain('Nothing is left to refund');
  });

  it('exits 5 naming --amount when it is more than refundable, and refunds nothing', async () => {
    const { id } = await paidOrder();
    const result = await till(['refunds', 'create', '--order', id, '--amount', '2001', '--reason', 'other', '--yes', '--json'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(JSON.parse(result.stderr).error.message).toMatch(/amount \(--amount\): .*exceeds the refundable amount 20\.00 USD/);
    expect(await tillJson(['orders', 'get', id], acme.env)).toMatchObject({ refunded_amount: 0 });
  });

  it('refuses to refund off a terminal without --yes, and names missing flags', async () => {
    const { id } = await paidOrder();
    const unconfirmed = await till(['refunds', 'create', '--order', id, '--amount', '100', '--reason', 'other', '--json'], acme.env);
    expect(unconfirmed.exitCode).toBe(2);
    expect(JSON.parse(unconfirmed.stderr).error.code).toBe('CONFIRMATION_REQUIRED');
    const missing = await till(['refunds', 'create', '--json'], acme.env);
    expect(missing.exitCode).toBe(2);
    expect(JSON.parse(missing.stderr).error.message).toBe('Missing --order, --amount, --reason (needed to create a refund).');
    expect((await till(['refunds', 'create', '--order', id, '--amount', 'half', '--reason', 'other', '--yes'], acme.env)).exitCode).toBe(5);
    expect(await tillJson(['orders', 'get', id], acme.env)).toMatchObject({ refunded_amount: 0 });
  });
});

describe('till refunds create on a terminal', () => {
  it('shows the refundable amount and asks before refunding', async () => {
    const { id } = await paidOrder();
    const result = await tillOnTerminal(['refunds', 'create', '--order', id, '--amount', '500', '--reason', 'duplicate', '--json'], acme.env, [['Refund 5.00 USD + 1.00 USD tax of 20.00 USD refundable', 'y\r']]);
    expect(result.exitCode).toBe(0);
    expect(lastJson(result.stdout)).toMatchObject({ amount: 500, tax_amount: 100, reason: 'duplicate' });
  });

  it('checks the amount typed at the prompt against the refundable amount, as the price prompt checks a price', async () => {
    const { id } = await paidOrder();
    const result = await tillOnTerminal(['refunds', 'create', '--order', id, '--json'], { ...acme.env, NO_COLOR: '1' }, [
      ['Amount to refund', '2001\r'],
      ['20.01 USD is more than the 20.00 USD refundable', '\x7f\x7f\x7f\x7fhalf\r'],
      ['A whole number of minor units', '\x7f\x7f\x7f\x7f600\r'],
      ['Reason', '\r'],
      ['Refund 6.00 USD + 1.20 USD tax of 20.00 USD refundable', 'y\r'],
    ]);
    expect(result.exitCode).toBe(0);
    expect(lastJson(result.stdout)).toMatchObject({ amount: 600, reason: 'customer_request' });
  });

  it('prints one line saying what was refunded, and the refund only with --json', async () => {
    const { id } = await paidOrder();
    const result = await till(['refunds', 'create', '--order', id, '--amount', '500', '--reason', 'other', '--yes'], { ...acme.env, NO_COLOR: '1' });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^✓ Refunded 5\.00 USD \+ 1\.00 USD tax on order .* \(refund [0-9a-f-]{36}\)\.$/);
  });

  it('refunds nothing when the answer is no', async () => {
    const { id } = await paidOrder();
    const result = await tillOnTerminal(['refunds', 'create', '--order', id, '--amount', 'all', '--reason', 'other'], { ...acme.env, NO_COLOR: '1' }, [['refundable to bo@example.com', 'n\r']]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain('Refundable on order');
    expect(result.stdout).toContain('Nothing was refunded.');
    expect(await tillJson(['orders', 'get', id], acme.env)).toMatchObject({ refunded_amount: 0 });
  });
});

describe('--amount', () => {
  it('reads minor units, percentages of the order and all', () => {
    const order = { refundable: 700, net: 2000 };
    expect(parseAmount('250', order)).toBe(250);
    expect(parseAmount('all', order)).toBe(700);
    expect(parseAmount('50%', order)).toBe(1000);
    expect(parseAmount('12.5%', { refundable: 99, net: 99 })).toBe(12);
    for (const bad of ['0', '-5', '1.5', '0%', '101%', 'half', '']) expect(() => parseAmount(bad, order), bad).toThrow(/--amount/);
  });
});
