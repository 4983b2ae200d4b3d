import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { v1Request } from '../../../daemon/testing/v1.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Checkout CLI Shop');
});
afterAll(() => daemon?.close());

describe('till checkouts, scripted with --json', () => {
  it('creates a checkout, gets and lists it, and prints its hosted page with open', async () => {
    const product = await tillJson(['products', 'create', '--name', 'Field guide', '--price', '1900:usd'], acme.env);
    const created = await tillJson(['checkouts', 'create', '--product', product.id, '--customer-email', 'cli@example.com', '--customer-country', 'fr', '--metadata', 'source=cli'], acme.env);
    expect(created).toMatchObject({
      status: 'open',
      product_id: product.id,
      total_amount: 1900,
      customer_email: 'cli@example.com',
      customer_billing_address: expect.objectContaining({ country: 'FR' }),
      metadata: { source: 'cli' },
      organization_id: acme.organizationId,
    });
    expect(await tillJson(['checkouts', 'get', created.id], acme.env)).toMatchObject({ id: created.id, client_secret: created.client_secret });
    const listed = await tillJson(['checkouts', 'list', '--status', 'open', '--product', product.id], acme.env);
    expect(listed.items.map((c: { id: string }) => c.id)).toEqual([created.id]);

    const opened = await tillJson(['checkouts', 'open', created.id, '--no-browser'], acme.env);
    expect(opened).toEqual({ id: created.id, status: 'open', url: `${daemon.url}/checkout/${created.client_secret}`, expires_at: created.expires_at, opened: false });

    // Paid by the customer (the sandbox test token), the list shows it succeeded.
    const paid = await v1Request(daemon.url, undefined, 'POST', `/checkouts/client/${created.client_secret}/confirm`, { confirmation_token_id: 'tok_visa' });
    expect(paid.status).toBe(200);
    const succeeded = await tillJson(['checkouts', 'list', '--status', 'succeeded'], acme.env);
    expect(succeeded.items.map((c: { id: string }) => c.id)).toEqual([created.id]);
  });

  it('prints one line and the payment page on a create without --json, and a hint naming the real id', async () => {
    const product = await tillJson(['products', 'create', '--name', 'Atlas', '--price', '900:usd'], acme.env);
    const result = await till(['checkouts', 'create', '--product', product.id], { ...acme.env, NO_COLOR: '1' });
    expect(result.exitCode).toBe(0);
    const [line, url, ...rest] = result.stdout.split('\n');
    const id = /^✓ Created checkout \(([0-9a-f-]{36})\)\.$/.exec(line!)?.[1];
    expect(id, result.stdout).toBeDefined();
    expect(url).toMatch(new RegExp(`^  ${daemon.url}/checkout/\\S+$`));
    expect(rest).toEqual([]);
    expect(result.stderr).toContain(`till checkouts open ${id}\``);
    expect(result.stderr).not.toMatch(/open ID/);
    const list = await till(['checkouts', 'list', '--product', product.id], acme.env);
    expect(list.stdout).toContain('9.00');
    expect(list.stdout).toContain('open');
  });

  it('exits 2 naming --product when it is missing off a terminal, and 4 for an unknown checkout', async () => {
    const missing = await till(['checkouts', 'create', '--json'], acme.env);
    expect(missing.exitCode).toBe(2);
    expect(JSON.parse(missing.stderr).error.message).toContain('--product');
    expect((await till(['checkouts', 'open', '00000000-0000-4000-8000-000000000000', '--no-browser'], acme.env)).exitCode).toBe(4);
  });

  it('names the flag of a refused field: a product of nobody', async () => {
    const result = await till(['checkouts', 'create', '--product', '00000000-0000-4000-8000-000000000000', '--json'], acme.env);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('--product');
  });
});
