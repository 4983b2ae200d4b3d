import { get } from 'node:http';
import type { Polar } from '@polar-sh/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer } from '../../core/billing/customers/service.js';
import { seedPaidOrder } from '../../core/billing/orders/testing.js';
import { EXPORT_PAGE_SIZE } from '../../core/billing/shared/csv.js';
import { fixedClock, systemClock } from '../../core/clock.js';
import { createSandboxProcessor } from '../../core/payments/sandbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let otherOrganizationId: string;
let sdk: Polar;
let anonymous: Polar;

const v1 = (token: string | undefined, method: string, path: string) => v1Request(daemon.url, token, method, path);

/** A CSV answer read back into rows (the exports quote only fields with commas, quotes or line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), (i += 1);
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') row.push(field), rows.push(row), (row = []), (field = ''), (i += 1);
    else field += c;
  }
  return rows;
}

/** A GET on a new connection (no keep-alive pool), answering the body of a 200. */
function freshGet(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get(`${daemon.url}${path}`, { agent: false, headers: { authorization: `Bearer ${owner.token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${res.statusCode}: ${body}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

async function mint(scopes: string[]) {
  const res = await v1Request(daemon.url, owner.token, 'POST', '/organization-access-tokens/', { comment: 'exports test', scopes, organization_id: organizationId });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Erin Exports' });
  organizationId = await createOrganization(owner, 'Export House');
  otherOrganizationId = await createOrganization(owner, 'Other House');
  sdk = polarSdk(daemon.url, owner.token);
  anonymous = polarSdk(daemon.url, '');
  expect((await v1Request(daemon.url, owner.token, 'PATCH', `/organizations/${organizationId}/clock`, { sandbox: true })).status).toBe(200);
});
afterAll(async () => {
  for (const line of daemon?.logs ?? []) if (line.err) console.error(JSON.stringify(line.err).slice(0, 3000));
  await daemon?.close();
});

describe('CSV exports', () => {
  it('answers 401 to an export without credentials and 403 to a token without the read scope', async () => {
    for (const path of ['/customers/export', '/orders/export', '/subscriptions/export']) expect((await v1(undefined, 'GET', path)).status).toBe(401);
    const token = await mint(['products:read']);
    for (const path of ['/customers/export', '/orders/export', '/subscriptions/export']) expect((await v1(token, 'GET', path)).status).toBe(403);
  });

  it('exports customers through the SDK with Polar’s columns, quoting what needs it, not another organization’s', async () => {
    await sdk.customers.create({
      organizationId,
      email: 'quote@example.com',
      name: 'Quote, "The" Customer',
      externalId: 'ext-1',
      billingAddress: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', state: 'US-IL', country: 'US' },
      metadata: { plan: 'gold', seats: 3 },
    });
    await sdk.customers.create({ organizationId: otherOrganizationId, email: 'elsewhere@example.com' });
    const csv = await sdk.customers.export({ organizationId });
    const rows = parseCsv(csv);
    expect(rows[0]).toEqual(['ID', 'External ID', 'Created At', 'Email', 'Name', 'Tax ID', 'Billing Address Line 1', 'Billing Address Line 2', 'Billing Address City', 'Billing Address State', 'Billing Address Zip', 'Billing Address Country', 'Metadata']);
    const quote = rows.find((row) => row[3] === 'quote@example.com')!;
    expect(quote.slice(1)).toEqual([
      'ext-1',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/),
      'quote@example.com',
      'Quote, "The" Customer',
      '',
      '1 Main St',
      '',
      'Springfield',
      'US-IL',
      '12345',
      'US',
      '{"plan": "gold", "seats": 3}',
    ]);
    expect(csv).toContain('"Quote, ""The"" Customer"');
    expect(rows.some((row) => row[3] === 'elsewhere@example.com')).toBe(false);
  });

  it('answers the export with text/csv and an attachment name, not the by-id route’s "Customer not found"', async () => {
    const res = await v1(owner.token, 'GET', `/customers/export?organization_id=${organizationId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="polar-customers.csv"');
    expect((await res.text()).split('\r\n')[0]).toMatch(/^ID,External ID,/);
  });

  it('streams every customer across page boundaries, oldest first, with the list’s filters', async () => {
    const organization = await createOrganization(owner, 'Crowded House');
    const count = EXPORT_PAGE_SIZE + 5;
    const email = (i: number) => `c${String(i).padStart(4, '0')}@crowd.example`;
    // One second apart: customers created in the same millisecond would be ordered by their random ids.
    const clock = fixedClock(new Date(Date.now() - count * 1000));
    for (let i = 0; i < count; i += 1) {
      await createCustomer(daemon.db, clock, organization, { type: 'individual', email: email(i), metadata: {} });
      clock.advance(1000);
    }
    // A connection of its own: the client's pooled ones sat idle while the customers were written and may be closed.
    const rows = parseCsv(await freshGet(`/v1/customers/export?organization_id=${organization}`)).slice(1);
    expect(rows.map((row) => row[3])).toEqual(Array.from({ length: count }, (_, i) => email(i)));
    expect(new Set(rows.map((row) => row[0])).size).toBe(count);
    const filtered = parseCsv(await freshGet(`/v1/customers/export?organization_id=${organization}&email=C0007@crowd.example`));
    expect(filtered.slice(1).map((row) => row[3])).toEqual(['c0007@crowd.example']);
  }, 120_000);

  it('exports orders with the default columns, or the columns, statuses, dates and time zone asked for', async () => {
    const customer = await sdk.customers.create({ organizationId, email: 'buyer@example.com', name: 'Bea Buyer' });
    const product = await sdk.products.create({ organizationId, name: 'Ebook', prices: [{ amountType: 'fixed', priceAmount: 1999, priceCurrency: 'usd' }] });
    const payments = createSandboxProcessor({ db: daemon.db });
    const order = await seedPaidOrder(daemon.db, systemClock, payments, {
      organizationId,
      customerId: customer.id,
      productId: product.id,
      productPriceId: product.prices[0]!.id,
      label: 'Ebook',
      amount: 1999,
      discountAmount: 499,
      taxAmount: 300,
      billingName: 'Bea B. Buyer',
      billingAddress: { line1: 'x', line2: null, postal_code: '75001', city: 'Paris', state: null, country: 'FR' },
    });
    const stored = await sdk.orders.get({ id: order.id });

    const rows = parseCsv(await sdk.orders.export({ organizationId, productId: product.id }));
    expect(rows[0]).toEqual(['Email', 'Created At', 'Product', 'Net Amount', 'Currency', 'Status', 'Invoice number']);
    expect(rows.slice(1)).toEqual([['buyer@example.com', expect.stringMatching(/\+00:00$/), 'Ebook', '15.0', 'usd', 'paid', stored.invoiceNumber]]);

    const columns = ['customer_name', 'billing_name', 'billing_country', 'subtotal_amount', 'discount_amount', 'tax_amount', 'total_amount', 'refunded_amount', 'billing_reason', 'created_at'];
    const query = new URLSearchParams([['organization_id', organizationId], ['product_id', product.id], ['status', 'paid'], ['timezone', 'Asia/Kolkata'], ...columns.map((c) => ['columns', c])]);
    const chosen = parseCsv(await (await v1(owner.token, 'GET', `/orders/export?${query}`)).text());
    expect(chosen[0]).toEqual(['Customer Name', 'Billing Name', 'Billing Country', 'Subtotal', 'Discount', 'Tax', 'Total', 'Refunded Amount', 'Billing Reason', 'Created At']);
    expect(chosen[1]).toEqual(['Bea Buyer', 'Bea B. Buyer', 'FR', '19.99', '4.99', '3.0', '18.0', '0.0', 'purchase', expect.stringMatching(/\+05:30$/)]);

    const none = parseCsv(await (await v1(owner.token, 'GET', `/orders/export?product_id=${product.id}&status=refunded`)).text());
    expect(none).toHaveLength(1);
    const after = new Date(stored.createdAt.getTime() + 1000).toISOString();
    const res = await v1(owner.token, 'GET', `/orders/export?product_id=${product.id}&created_after=${encodeURIComponent(after)}`);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="polar-orders-${after.slice(0, 10)}.csv"`);
    expect(parseCsv(await res.text())).toHaveLength(1);
  });

  it('refuses an unknown time zone, column or date with a 422 naming the query parameter', async () => {
    const bad = await v1(owner.token, 'GET', '/orders/export?timezone=Mars/Olympus');
    expect(bad.status).toBe(422);
    expect(await bad.json()).toMatchObject({ detail: [{ loc: ['query', 'timezone'], msg: expect.stringContaining('not a valid IANA time zone') }] });
    const column = await v1(owner.token, 'GET', '/subscriptions/export?columns=shoe_size');
    expect(column.status).toBe(422);
    expect(await column.json()).toMatchObject({ detail: [{ loc: ['query', 'columns', 0] }] });
    expect((await v1(owner.token, 'GET', '/subscriptions/export?started_after=yesterday')).status).toBe(422);
    expect((await v1(owner.token, 'GET', '/customers/export?active=maybe')).status).toBe(422);
  });

  it('exports subscriptions with Polar’s columns, their interval and their discount', async () => {
    const product = await sdk.products.create({ organizationId, name: 'Team Plan', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 5000, priceCurrency: 'usd' }] });
    const discount = await sdk.discounts.create({ organizationId, name: 'Launch', code: 'LAUNCH20', type: 'percentage', basisPoints: 2000, duration: 'forever' });
    const checkout = await sdk.checkouts.create({ products: [product.id], customerEmail: 'team@example.com', customerName: 'Tess Team', discountId: discount.id });
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'NL' } } });

    const rows = parseCsv(await sdk.subscriptions.export({ organizationId }));
    expect(rows[0]).toEqual(['Email', 'Started At', 'Product', 'Amount', 'Currency', 'Status', 'Billing Interval']);
    expect(rows.slice(1)).toEqual([['team@example.com', expect.stringMatching(/\+00:00$/), 'Team Plan', '50.0', 'usd', 'active', 'month']]);

    const columns = ['customer_name', 'net_amount', 'discount', 'cancel_at_period_end', 'canceled_at', 'seats'];
    const query = new URLSearchParams([['product_id', product.id], ['active', 'true'], ...columns.map((c) => ['columns', c])]);
    const chosen = parseCsv(await (await v1(owner.token, 'GET', `/subscriptions/export?${query}`)).text());
    expect(chosen).toEqual([
      ['Customer Name', 'Net Amount', 'Discount', 'Cancels At Period End', 'Canceled At', 'Seats'],
      ['Tess Team', '40.0', 'LAUNCH20', 'false', '', ''],
    ]);
    expect(parseCsv(await (await v1(owner.token, 'GET', `/subscriptions/export?product_id=${product.id}&status=canceled`)).text())).toHaveLength(1);
  });
});
