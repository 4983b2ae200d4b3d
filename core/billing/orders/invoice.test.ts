import { PDFParse } from 'pdf-parse';
import { describe, expect, it } from 'vitest';
import { renderInvoicePdf, signedInvoiceUrl, verifyInvoiceSignature, type InvoiceData } from './invoice.js';

const SECRET = 'a-secret-of-at-least-thirty-two-characters';

const invoice = (overrides: Partial<InvoiceData> = {}): InvoiceData => ({
  seller: { name: 'Acme Labs', email: 'billing@acme.test', website: 'https://acme.test' },
  invoiceNumber: 'ACME-0007',
  issuedAt: new Date('2026-03-01T10:00:00Z'),
  status: 'paid',
  description: 'Pro plan',
  customer: {
    email: 'ada@example.com',
    billingName: 'Ada Lovelace',
    billingAddress: { line1: '1 Rue de Rivoli', line2: null, postal_code: '75001', city: 'Paris', state: null, country: 'FR' },
  },
  currency: 'eur',
  items: [{ label: 'Pro plan (monthly)', amount: 2000, taxAmount: 360 }],
  subtotalAmount: 2000,
  discountAmount: 200,
  discountName: 'Launch',
  netAmount: 1800,
  taxAmount: 360,
  totalAmount: 2160,
  refunds: [],
  paidWith: 'visa ending 4242',
  ...overrides,
});

async function textOf(pdf: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

describe('the invoice PDF', () => {
  it('shows the seller, the customer and address, the number, the date, the items and every total in the currency', async () => {
    const pdf = await renderInvoicePdf(invoice());
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await textOf(pdf);
    for (const expected of [
      'Invoice', 'ACME-0007', '2026-03-01', 'Acme Labs', 'billing@acme.test', 'Ada Lovelace', 'ada@example.com', '1 Rue de Rivoli',
      '75001 Paris', 'FR', 'Pro plan (monthly)', '20.00 EUR', 'Discount (Launch)', '-2.00 EUR', '18.00 EUR', '3.60 EUR', '21.60 EUR',
      'Paid 21.60 EUR with visa ending 4242.',
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain('Refunds');
  });

  it('lists the refunds made and what the seller kept', async () => {
    const text = await textOf(await renderInvoicePdf(invoice({ status: 'partially_refunded', refunds: [{ createdAt: new Date('2026-03-05T00:00:00Z'), amount: 900, taxAmount: 180, reason: 'customer_request' }] })));
    expect(text).toContain('Refunds');
    expect(text).toContain('Refund of 2026-03-05 (customer request)');
    expect(text).toContain('-10.80 EUR');
    expect(text).toContain('Amount kept');
    expect(text).toContain('10.80 EUR');
  });

  it('writes zero-decimal currencies in whole units', async () => {
    const text = await textOf(await renderInvoicePdf(invoice({ currency: 'jpy', items: [{ label: 'Seat', amount: 1500, taxAmount: 0 }], subtotalAmount: 1500, discountAmount: 0, discountName: null, netAmount: 1500, taxAmount: 0, totalAmount: 1500 })));
    expect(text).toContain('1500 JPY');
    expect(text).not.toContain('15.00 JPY');
  });

  it('flows a long list of items onto further pages', async () => {
    const items = Array.from({ length: 80 }, (_, i) => ({ label: `Line ${i + 1}`, amount: 100, taxAmount: 0 }));
    const text = await textOf(await renderInvoicePdf(invoice({ items, subtotalAmount: 8000, discountAmount: 0, discountName: null, netAmount: 8000, taxAmount: 0, totalAmount: 8000 })));
    expect(text).toContain('Line 1');
    expect(text).toContain('Line 80');
    expect(text).toContain('80.00 EUR');
  });
});

describe('invoice links', () => {
  const now = new Date('2026-03-01T10:00:00Z');

  it('accepts its own signature until it expires', () => {
    const url = new URL(signedInvoiceUrl('http://127.0.0.1:7700', SECRET, 'order-1', now));
    expect(url.pathname).toBe('/v1/orders/order-1/invoice.pdf');
    const [expires, signature] = [url.searchParams.get('expires')!, url.searchParams.get('signature')!];
    expect(verifyInvoiceSignature(SECRET, 'order-1', expires, signature, now)).toBe(true);
    expect(verifyInvoiceSignature(SECRET, 'order-1', expires, signature, new Date(now.getTime() + 61 * 60 * 1000))).toBe(false);
  });

  it('refuses a signature made for another order, another expiry or another secret', () => {
    const url = new URL(signedInvoiceUrl('http://127.0.0.1:7700', SECRET, 'order-1', now));
    const [expires, signature] = [url.searchParams.get('expires')!, url.searchParams.get('signature')!];
    expect(verifyInvoiceSignature(SECRET, 'order-2', expires, signature, now)).toBe(false);
    expect(verifyInvoiceSignature(SECRET, 'order-1', String(Number(expires) + 1), signature, now)).toBe(false);
    expect(verifyInvoiceSignature('another-secret-of-at-least-thirty-two-chars', 'order-1', expires, signature, now)).toBe(false);
    expect(verifyInvoiceSignature(SECRET, 'order-1', 'soon', signature, now)).toBe(false);
  });
});
