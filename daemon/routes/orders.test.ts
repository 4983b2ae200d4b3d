import { PDFParse } from 'pdf-parse';
import { MissingInvoiceBillingDetails } from '@polar-sh/sdk/models/errors/missinginvoicebillingdetails.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPaidOrder } from '../../core/billing/orders/testing.js';
import { createOrder } from '../../core/billing/orders/service.js';
import { systemClock } from '../../core/clock.js';
import { createSandboxProcessor } from '../../core/payments/sandbox.js';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let customerId: string;
let productId: string;
let priceId: string;

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);
const ADDRESS = { line1: '1 Rue de Rivoli', line2: null, postal_code: '75001', city: 'Paris', state: null, country: 'FR' };

const paidOrder = (input: Partial<Parameters<typeof seedPaidOrder>[3]> = {}) =>
  seedPaidOrder(daemon.db, systemClock, createSandboxProcessor({ db: daemon.db }), { organizationId, customerId, productId, productPriceId: priceId, label: 'Pro licence', amount: 2000, taxAmount: 400, ...input });

async function mint(scopes: string[]) {
  const res = await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'orders test', scopes });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

async function pdfText(bytes: ArrayBuffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(bytes) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Olga Orders' });
  organizationId = await createOrganization(owner, 'Order Works');
  const polar = polarSdk(daemon.url, owner.token);
  customerId = (await polar.customers.create({ email: 'ada@example.com', name: 'Ada Lovelace', organizationId })).id;
  const product = await polar.products.create({ name: 'Pro licence', organizationId, prices: [{ amountType: 'fixed', priceAmount: 2000, priceCurrency: 'usd' }] });
  productId = product.id;
  priceId = product.prices[0]!.id;
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/orders', () => {
  it('answers 401 without credentials', async () => {
    expect((await v1(undefined, 'GET', '/orders/')).status).toBe(401);
  });

  it('gets an order in the shape @polar-sh/sdk validates, with its customer, product and items embedded', async () => {
    const { id } = await paidOrder({ metadata: { source: 'test' } });
    const order = await polarSdk(daemon.url, owner.token).orders.get({ id });
    expect(order).toMatchObject({
      id,
      status: 'paid',
      paid: true,
      subtotalAmount: 2000,
      discountAmount: 0,
      netAmount: 2000,
      taxAmount: 400,
      totalAmount: 2400,
      dueAmount: 0,
      refundedAmount: 0,
      refundableAmount: 2000,
      refundableTaxAmount: 400,
      currency: 'usd',
      billingReason: 'purchase',
      customerId,
      productId,
      subscriptionId: null,
      discount: null,
      subscription: null,
      metadata: { source: 'test' },
      description: 'Pro licence',
      isInvoiceGenerated: false,
      customer: { id: customerId, email: 'ada@example.com' },
      product: { id: productId, name: 'Pro licence', isRecurring: false },
      items: [{ label: 'Pro licence', amount: 2000, taxAmount: 400, proration: false, productPriceId: priceId }],
    });
    expect(order.invoiceNumber).toMatch(/^ORDERWORKS.*-\d{4}$/);
  });

  it('lists by status and by creation time (status, created_after, created_before, as Polar filters the list)', async () => {
    const before = new Date(Date.now() - 1000);
    const { id } = await paidOrder({ metadata: { batch: 'filters' } });
    const after = new Date(Date.now() + 1000);
    const listed = async (query: string) => (await (await v1(owner.token, 'GET', `/orders/?metadata[batch]=filters&${query}`)).json()).items.map((o: { id: string }) => o.id);
    expect(await listed('status=paid')).toEqual([id]);
    expect(await listed('status=refunded&status=pending')).toEqual([]);
    expect(await listed(`created_after=${before.toISOString()}&created_before=${after.toISOString()}`)).toEqual([id]);
    expect(await listed(`created_after=${after.toISOString()}`)).toEqual([]);
    expect(await listed(`created_before=${before.toISOString()}`)).toEqual([]);
    const bad = await v1(owner.token, 'GET', '/orders/?status=lost');
    expect(bad.status).toBe(422);
    expect((await bad.json()).detail[0].loc.slice(0, 2)).toEqual(['query', 'status']);
  });

  it('answers 404 ResourceNotFound for an unknown order and for another organization’s order', async () => {
    const other = await signUp(daemon.url, { name: 'Otto Other' });
    await createOrganization(other, 'Elsewhere');
    const { id } = await paidOrder();
    expect((await v1(owner.token, 'GET', '/orders/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    const res = await v1(other.token, 'GET', `/orders/${id}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'ResourceNotFound' });
  });

  it('lists orders with filters, sorting and pagination through the SDK', async () => {
    const polar = polarSdk(daemon.url, owner.token);
    const second = (await polar.customers.create({ email: `bob-${Date.now()}@example.com`, organizationId, externalId: `ext-${Date.now()}` }));
    const mine = [await paidOrder({ customerId: second.id, amount: 1000, taxAmount: 0, metadata: { tier: 'gold' } }), await paidOrder({ customerId: second.id, amount: 3000, taxAmount: 0 })];
    const byCustomer = await polar.orders.list({ customerId: second.id, sorting: ['-amount'] });
    expect(byCustomer.result.items.map((o) => o.id)).toEqual([mine[1].id, mine[0].id]);
    expect(byCustomer.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    const byExternal = await polar.orders.list({ externalCustomerId: second.externalId! });
    expect(byExternal.result.items).toHaveLength(2);
    const byMetadata = await polar.orders.list({ organizationId, metadata: { tier: 'gold' } });
    expect(byMetadata.result.items.map((o) => o.id)).toEqual([mine[0].id]);
    expect((await polar.orders.list({ productBillingType: 'recurring', customerId: second.id })).result.items).toHaveLength(0);
    expect((await polar.orders.list({ productBillingType: 'one_time', customerId: second.id })).result.items).toHaveLength(2);
    const legacy = await v1(owner.token, 'GET', `/orders/?customer_id=${second.id}&product_price_type=recurring`);
    expect((await legacy.json()).items).toEqual([]);
    const paged = await polar.orders.list({ customerId: second.id, limit: 1, page: 2, sorting: ['created_at'] });
    expect(paged.result.pagination.maxPage).toBe(2);
    expect(paged.result.items).toHaveLength(1);
    const byEmail = await polar.orders.list({ organizationId, sorting: ['customer', '-created_at'], limit: 100 });
    const emails = byEmail.result.items.map((o) => o.customer.email!.toLowerCase());
    expect(emails).toEqual([...emails].sort());
    expect(new Set(emails).size).toBeGreaterThan(1);
    expect((await polar.orders.list({ organizationId, sorting: ['-product'] })).result.items.length).toBeGreaterThan(0);
    const bad = await v1(owner.token, 'GET', '/orders/?sorting=colour');
    expect(bad.status).toBe(422);
    expect(await bad.json()).toMatchObject({ detail: [{ loc: ['query', 'sorting'] }] });
  });

  it('updates the billing name and address, emits order.updated, and refuses a bad address without changing anything', async () => {
    const { id } = await paidOrder();
    const updated = await polarSdk(daemon.url, owner.token).orders.update({ id, orderUpdate: { billingName: 'Ada L.', billingAddress: { country: 'US', state: 'ny', line1: '5th Ave', city: 'New York', postalCode: '10001' } } });
    expect(updated).toMatchObject({ billingName: 'Ada L.', billingAddress: { country: 'US', state: 'US-NY', line1: '5th Ave' } });
    const events = (await listEvents(daemon.db, organizationId, { type: 'order.updated' })).filter((e) => (e.payload.data as { id: string }).id === id);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload.data).toMatchObject({ billing_name: 'Ada L.' });
    const res = await v1(owner.token, 'PATCH', `/orders/${id}`, { billing_name: 'Nope', billing_address: { country: 'XX' } });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ detail: [{ loc: ['body', 'billing_address', 'country'] }] });
    expect((await polarSdk(daemon.url, owner.token).orders.get({ id })).billingName).toBe('Ada L.');
  });

  it('lets a token with orders:read read and generate the invoice, but not update', async () => {
    const token = await mint(['orders:read']);
    const { id } = await paidOrder();
    expect((await v1(token, 'GET', `/orders/${id}`)).status).toBe(200);
    expect((await v1(token, 'PATCH', `/orders/${id}`, { billing_name: 'X' })).status).toBe(403);
    // Generating the invoice needs only orders:read, as in Polar.
    expect((await v1(owner.token, 'PATCH', `/orders/${id}`, { billing_name: 'Ada Lovelace', billing_address: ADDRESS })).status).toBe(200);
    expect((await v1(token, 'POST', `/orders/${id}/invoice`)).status).toBe(202);
    expect((await v1(token, 'GET', `/orders/${id}`).then((r) => r.json())).is_invoice_generated).toBe(true);
  });
});

describe('order invoices', () => {
  it('refuses an invoice without billing details with Polar’s MissingInvoiceBillingDetails', async () => {
    const { id } = await paidOrder();
    const res = await v1(owner.token, 'POST', `/orders/${id}/invoice`);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: 'MissingInvoiceBillingDetails' });
  });

  it('refuses an invoice for an order not paid yet', async () => {
    const pending = await daemon.db.transaction((trx) =>
      createOrder(trx, systemClock, {
        organizationId, customerId, productId, subscriptionId: null, checkoutId: null, billingReason: 'purchase', currency: 'usd',
        items: [{ label: 'Later', amount: 500, taxAmount: 0, proration: false, productPriceId: null }], subtotalAmount: 500, discountAmount: 0, discountId: null,
        netAmount: 500, taxAmount: 0, totalAmount: 500, status: 'pending', paymentId: null, billingName: 'Ada', billingAddress: ADDRESS, metadata: {}, customFieldData: {},
      }),
    );
    const res = await v1(owner.token, 'POST', `/orders/${pending.id}/invoice`);
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: 'OrderNotEligibleForInvoice' });
  });

  it('generates the invoice (202), hands out a signed link, and serves a PDF whose text is the order', async () => {
    const { id } = await paidOrder({ billingName: 'Ada Lovelace', billingAddress: ADDRESS });
    const polar = polarSdk(daemon.url, owner.token);
    const generated = await v1(owner.token, 'POST', `/orders/${id}/invoice`);
    expect(generated.status).toBe(202);
    const order = await polar.orders.get({ id });
    expect(order.isInvoiceGenerated).toBe(true);
    const { url } = await polar.orders.invoice({ id });
    expect(url).toMatch(/\/v1\/orders\/.+\/invoice\.pdf\?expires=\d+&signature=/);

    // The link works without credentials, as a presigned URL does.
    const pdf = await fetch(url);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const text = await pdfText(await pdf.arrayBuffer());
    for (const expected of ['Invoice', order.invoiceNumber!, 'Order Works', 'Ada Lovelace', 'ada@example.com', '1 Rue de Rivoli', '75001 Paris', 'Pro licence', '20.00 USD', '4.00 USD', '24.00 USD', 'Paid 24.00 USD with visa ending 4242.']) {
      expect(text).toContain(expected);
    }

    const forged = new URL(url);
    forged.searchParams.set('signature', 'x'.repeat(43));
    expect((await fetch(forged)).status).toBe(403);
    const other = (await paidOrder({ billingName: 'B', billingAddress: ADDRESS })).id;
    expect((await fetch(url.replace(id, other))).status).toBe(403);
  });

  it('generates on first GET when the caller may write, and 404s it for another organization', async () => {
    const { id } = await paidOrder({ billingName: 'Ada Lovelace', billingAddress: ADDRESS });
    const res = await v1(owner.token, 'GET', `/orders/${id}/invoice`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ url: expect.stringContaining('/invoice.pdf?') });
    const stranger = await signUp(daemon.url, { name: 'Sam Stranger' });
    expect((await v1(stranger.token, 'GET', `/orders/${id}/invoice`)).status).toBe(404);
    expect((await v1(stranger.token, 'POST', `/orders/${id}/invoice`)).status).toBe(404);
  });
});

describe('order receipts', () => {
  it('hands out a signed link to the receipt PDF of a paid order (orders.receipt), without billing details, and 404 ReceiptNotAllocated for an order not paid yet', async () => {
    const { id } = await paidOrder();
    const polar = polarSdk(daemon.url, owner.token);
    const order = await polar.orders.get({ id });
    const receipt = await polar.orders.receipt({ id });
    expect(receipt?.url).toMatch(/\/v1\/orders\/.+\/receipt\.pdf\?expires=\d+&signature=/);
    const pdf = await fetch(receipt!.url);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const text = await pdfText(await pdf.arrayBuffer());
    for (const expected of ['Receipt', order.invoiceNumber!, 'Order Works', 'Ada Lovelace', 'ada@example.com', 'Pro licence', '24.00 USD', 'Paid 24.00 USD with visa ending 4242.']) {
      expect(text).toContain(expected);
    }
    // A receipt link does not open the invoice, nor the receipt of another order.
    expect((await fetch(receipt!.url.replace('/receipt.pdf', '/invoice.pdf'))).status).toBe(403);
    const other = (await paidOrder()).id;
    expect((await fetch(receipt!.url.replace(id, other))).status).toBe(403);

    const pending = await daemon.db.transaction((trx) =>
      createOrder(trx, systemClock, {
        organizationId, customerId, productId, subscriptionId: null, checkoutId: null, billingReason: 'purchase', currency: 'usd',
        items: [{ label: 'Later', amount: 500, taxAmount: 0, proration: false, productPriceId: null }], subtotalAmount: 500, discountAmount: 0, discountId: null,
        netAmount: 500, taxAmount: 0, totalAmount: 500, status: 'pending', paymentId: null, billingName: null, billingAddress: null, metadata: {}, customFieldData: {},
      }),
    );
    // Not paid, so no receipt allocated: 404 ReceiptNotAllocated, as Polar (its 202 means a receipt being rendered).
    const notYet = await v1(owner.token, 'GET', `/orders/${pending.id}/receipt`);
    expect(notYet.status).toBe(404);
    expect(await notYet.json()).toMatchObject({ error: 'ReceiptNotAllocated', code: 'RECEIPT_NOT_ALLOCATED' });
    await expect(polar.orders.receipt({ id: pending.id })).rejects.toThrow();
    const stranger = await signUp(daemon.url, { name: 'Rita Receipts' });
    expect((await v1(stranger.token, 'GET', `/orders/${id}/receipt`)).status).toBe(404);
  });
});

describe('orders made by checkouts', () => {
  it('embeds the subscription and the discount of a recurring checkout in the shape the SDK validates', async () => {
    const polar = polarSdk(daemon.url, owner.token);
    const plan = await polar.products.create({ organizationId, name: 'Monthly plan', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd' }] } as never);
    const discount = await polar.discounts.create({ organizationId, name: 'Quarter off', type: 'percentage', basisPoints: 2500, duration: 'repeating', durationInMonths: 3 } as never);
    const checkout = await polar.checkouts.create({ products: [plan.id], discountId: discount.id, customerEmail: `sub-${Date.now()}@example.com` });
    await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'DE' } } });
    const listed = await polar.orders.list({ checkoutId: checkout.id, productBillingType: 'recurring' });
    expect(listed.result.items).toHaveLength(1);
    const order = await polar.orders.get({ id: listed.result.items[0]!.id });
    expect(order).toMatchObject({
      billingReason: 'subscription_create',
      status: 'paid',
      subtotalAmount: 1000,
      discountAmount: 250,
      netAmount: 750,
      discountId: discount.id,
      discount: { id: discount.id, name: 'Quarter off', basisPoints: 2500, durationInMonths: 3 },
      subscription: { productId: plan.id, status: 'active', recurringInterval: 'month', amount: 1000, currency: 'usd' },
      product: { id: plan.id, isRecurring: true },
    });
    expect(order.subscriptionId).toBe(order.subscription!.id);
    expect((await polar.orders.list({ subscriptionId: order.subscriptionId!, discountId: discount.id })).result.items.map((o) => o.id)).toEqual([order.id]);
  });
});

describe('order invoices through the SDK', () => {
  it('generates with orders.generateInvoice, and raises the SDK’s own error when billing details are missing', async () => {
    const polar = polarSdk(daemon.url, owner.token);
    const without = await paidOrder();
    await expect(polar.orders.generateInvoice({ id: without.id })).rejects.toBeInstanceOf(MissingInvoiceBillingDetails);
    const { id } = await paidOrder({ billingName: 'Ada', billingAddress: ADDRESS });
    await polar.orders.generateInvoice({ id });
    expect((await polar.orders.get({ id })).isInvoiceGenerated).toBe(true);
  });
});
