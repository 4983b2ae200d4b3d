import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDFParse } from 'pdf-parse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPaidOrder } from '../../../core/billing/orders/testing.js';
import { systemClock } from '../../../core/clock.js';
import { createSandboxProcessor } from '../../../core/payments/sandbox.js';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, tillOnTerminal, type Seller } from '../../testing/catalog.js';
import { tempConfigDir, till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;
let customerId: string;

const paidOrder = (input: Partial<Parameters<typeof seedPaidOrder>[3]> = {}) =>
  seedPaidOrder(daemon.db, systemClock, createSandboxProcessor({ db: daemon.db }), { organizationId: acme.organizationId, customerId, label: 'Ebook', amount: 1500, taxAmount: 300, ...input });

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Order Shop');
  customerId = (await tillJson(['customers', 'create', '--email', 'ada@example.com', '--name', 'Ada'], acme.env)).id;
});
afterAll(() => daemon?.close());

describe('till orders, scripted with --json', () => {
  it('lists, filters and gets orders', async () => {
    const first = await paidOrder({ metadata: { batch: 'one' } });
    const second = await paidOrder({ amount: 4000, taxAmount: 0 });
    const listed = await tillJson(['orders', 'list', '--customer', customerId, '--sort', '-amount'], acme.env);
    expect(listed.items.map((order: { id: string }) => order.id).slice(0, 2)).toEqual([second.id, first.id]);
    const tagged = await tillJson(['orders', 'list', '--metadata', 'batch=one'], acme.env);
    expect(tagged.items.map((order: { id: string }) => order.id)).toEqual([first.id]);
    const order = await tillJson(['orders', 'get', first.id], acme.env);
    expect(order).toMatchObject({ id: first.id, status: 'paid', total_amount: 1800, refundable_amount: 1500, customer: { email: 'ada@example.com' } });
  });

  it('shows a table with the totals in the currency on a terminal', async () => {
    await paidOrder();
    const result = await tillOnTerminal(['orders', 'list', '--limit', '1'], { ...acme.env, NO_COLOR: '1' });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/ID +INVOICE +STATUS +DESCRIPTION +TOTAL/);
    expect(result.stdout).toContain('18.00 USD');
  });

  it('sets billing details line by line, keeping the other lines', async () => {
    const { id } = await paidOrder();
    await tillJson(['orders', 'update', id, '--billing-name', 'Ada Lovelace', '--billing-country', 'fr', '--billing-city', 'Paris', '--billing-line1', '1 Rue de Rivoli'], acme.env);
    const updated = await tillJson(['orders', 'update', id, '--billing-postal-code', '75001'], acme.env);
    expect(updated).toMatchObject({ billing_name: 'Ada Lovelace', billing_address: { country: 'FR', city: 'Paris', line1: '1 Rue de Rivoli', postal_code: '75001' } });
    const bad = await till(['orders', 'update', id, '--billing-country', 'ZZ', '--json'], acme.env);
    expect(bad.exitCode).toBe(5);
    expect(JSON.parse(bad.stderr).error.message).toContain('billing_address.country');
  });
});

describe('till orders invoice', () => {
  it('saves the invoice PDF, whose text is the order', async () => {
    const { id } = await paidOrder({ billingName: 'Ada Lovelace', billingAddress: { line1: '1 Rue de Rivoli', line2: null, postal_code: '75001', city: 'Paris', state: null, country: 'FR' } });
    const dir = tempConfigDir();
    const saved = await tillJson(['orders', 'invoice', id, '--output', join(dir, 'invoice.pdf')], acme.env);
    expect(saved).toMatchObject({ order_id: id, path: join(dir, 'invoice.pdf') });
    const parser = new PDFParse({ data: new Uint8Array(readFileSync(saved.path)) });
    const { text } = await parser.getText();
    await parser.destroy();
    for (const expected of [saved.invoice_number, 'Order Shop', 'Ada Lovelace', 'Ebook', '15.00 USD', '3.00 USD', '18.00 USD']) expect(text).toContain(expected);

    // Saving again refuses to overwrite, unless --force.
    const again = await till(['orders', 'invoice', id, '--output', saved.path], acme.env);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain('already exists');
    expect((await till(['orders', 'invoice', id, '--output', saved.path, '--force'], acme.env)).exitCode).toBe(0);
  });

  it('names the file after the invoice number by default', async () => {
    const { id } = await paidOrder({ billingName: 'Ada', billingAddress: { line1: null, line2: null, postal_code: null, city: null, state: null, country: 'DE' } });
    const cwd = tempConfigDir();
    const { execa } = await import('execa');
    const { TILL_BIN, tillEnv } = await import('../../testing/till.js');
    const result = await execa(process.execPath, [TILL_BIN, 'orders', 'invoice', id, '--json'], { cwd, env: tillEnv(acme.env), extendEnv: false, reject: false });
    expect(result.exitCode).toBe(0);
    const saved = JSON.parse(result.stdout);
    expect(saved.path).toBe(join(cwd, `Invoice-${saved.invoice_number}.pdf`));
    expect(existsSync(saved.path)).toBe(true);
  });

  it('explains what is missing when the order has no billing address', async () => {
    const { id } = await paidOrder();
    const result = await till(['orders', 'invoice', id, '--json'], acme.env);
    // docs/cli.md: the order's data is what is missing (HTTP 422), so exit 5 like other invalid input.
    expect(result.exitCode).toBe(5);
    expect(JSON.parse(result.stderr).error.message).toContain('billing address');
  });

  it('exits 4 for an unknown order', async () => {
    expect((await till(['orders', 'invoice', '00000000-0000-0000-0000-000000000000'], acme.env)).exitCode).toBe(4);
  });
});
