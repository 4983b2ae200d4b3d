import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { Database, Executor } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { findPayment } from '../../payments/repository.js';
import { refundsOfOrder } from '../refunds/repository.js';
import type { Refund } from '../refunds/schema.js';
import { formatAmount } from '../shared/currencies.js';
import { findOrder, markInvoiceGenerated } from './repository.js';
import type { StoredOrder } from './schema.js';
import { orderNotFound, recordOrderEvents, viewsOf, type Access } from './service.js';
import { orderDescription } from './serialize.js';

/** Everything an invoice shows, gathered before rendering. */
export interface InvoiceData {
  seller: { name: string; email: string | null; website: string | null };
  invoiceNumber: string;
  issuedAt: Date;
  status: StoredOrder['status'];
  description: string;
  /** A receipt is made without billing details: the name falls back to the customer's, the address may be missing. */
  customer: { email: string; billingName: string; billingAddress: StoredOrder['billingAddress'] };
  currency: string;
  items: { label: string; amount: number; taxAmount: number }[];
  subtotalAmount: number;
  discountAmount: number;
  discountName: string | null;
  netAmount: number;
  taxAmount: number;
  totalAmount: number;
  refunds: { createdAt: Date; amount: number; taxAmount: number; reason: string }[];
  /** How it was paid, when through a card: `visa ending 4242`. */
  paidWith?: string | null;
}

const notEligible = (status: string) =>
  new CoreError('conflict', 'ORDER_NOT_ELIGIBLE_FOR_INVOICE', `The order is ${status}: an invoice is made once it is paid`);
const missingDetails = () =>
  new CoreError(
    'conflict',
    'MISSING_INVOICE_BILLING_DETAILS',
    'The order needs a billing name and a billing address for an invoice: set them with PATCH /v1/orders/{id} (till orders update ID --billing-name … --billing-country …)',
  );

/** Checks that an invoice can be made for the order: paid, with a billing name and address (as Polar requires). */
function checkEligible(order: StoredOrder): asserts order is StoredOrder & { billingName: string; billingAddress: NonNullable<StoredOrder['billingAddress']> } {
  if (order.status === 'pending') throw notEligible(order.status);
  if (!order.billingName || !order.billingAddress) throw missingDetails();
}

async function findWritable(db: Executor, access: Access, id: string): Promise<StoredOrder> {
  const order = await findOrder(db, id, [...access.read]);
  if (!order) throw orderNotFound();
  return order;
}

/** POST /v1/orders/{id}/invoice: marks the invoice generated (order.updated the first time). */
export async function generateInvoice(db: Database, baseClock: Clock, access: Access, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    const order = await findOrder(trx, id, [...access.read], { forUpdate: true });
    if (!order) throw orderNotFound();
    if (!access.write.has(order.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this order but not generate its invoice');
    checkEligible(order);
    if (order.isInvoiceGenerated) return;
    const clock = await organizationClock(trx, baseClock, order.organizationId);
    const now = clock.now();
    if (await markInvoiceGenerated(trx, order.id, now)) await recordOrderEvents(trx, clock, { ...order, isInvoiceGenerated: true, modifiedAt: now }, ['order.updated']);
  });
}

/** How long an invoice link works. */
export const INVOICE_LINK_TTL_MS = 60 * 60 * 1000;

/** The two documents of an order; a link signed for one does not open the other. */
export type OrderDocument = 'invoice' | 'receipt';

const signature = (secret: string, orderId: string, expires: number, kind: OrderDocument) =>
  createHmac('sha256', secret).update(`till:${kind}:${orderId}:${expires}`).digest('base64url');

/** A link to the invoice (or receipt) PDF that works without credentials for an hour (as an S3 presigned URL would). */
export function signedInvoiceUrl(baseUrl: string, secret: string, orderId: string, now: Date, kind: OrderDocument = 'invoice'): string {
  const expires = now.getTime() + INVOICE_LINK_TTL_MS;
  const url = new URL(`/v1/orders/${encodeURIComponent(orderId)}/${kind}.pdf`, baseUrl);
  url.searchParams.set('expires', String(expires));
  url.searchParams.set('signature', signature(secret, orderId, expires, kind));
  return url.toString();
}

export function verifyInvoiceSignature(secret: string, orderId: string, expires: string, given: string, now: Date, kind: OrderDocument = 'invoice'): boolean {
  if (!/^\d{1,16}$/.test(expires) || Number(expires) < now.getTime()) return false;
  const expected = Buffer.from(signature(secret, orderId, Number(expires), kind));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** GET /v1/orders/{id}/invoice: the order must have an invoice to show (generated on first ask when it can be). */
export async function invoiceLink(db: Database, baseClock: Clock, access: Access, id: string, link: { baseUrl: string; secret: string; now: Date }): Promise<{ url: string }> {
  const order = await findWritable(db, access, id);
  checkEligible(order);
  if (!order.isInvoiceGenerated) {
    if (!access.write.has(order.organizationId)) throw new CoreError('not_found', 'INVOICE_NOT_GENERATED', 'The invoice of this order has not been generated yet');
    await generateInvoice(db, baseClock, access, id);
  }
  return { url: signedInvoiceUrl(link.baseUrl, link.secret, order.id, link.now) };
}

/**
 * GET /v1/orders/{id}/receipt: a link to the receipt of a paid order (no billing details needed, as Polar's
 * receipts). An order not paid yet has no receipt: 404 ReceiptNotAllocated, as Polar answers until a payment
 * allocates one (its 202 means a receipt being rendered, which Till's, rendered on request, never is).
 */
export async function receiptLink(db: Database, access: Access, id: string, link: { baseUrl: string; secret: string; now: Date }): Promise<{ url: string }> {
  const order = await findWritable(db, access, id);
  if (order.status === 'pending') throw new CoreError('not_found', 'RECEIPT_NOT_ALLOCATED', `No receipt allocated for order ${order.id}: it is not paid yet.`);
  return { url: signedInvoiceUrl(link.baseUrl, link.secret, order.id, link.now, 'receipt') };
}

/** What the receipt of a paid order shows: the invoice's content, with the customer's name where no billing name is set. */
export async function receiptData(db: Executor, orderId: string): Promise<InvoiceData> {
  const order = await findOrder(db, orderId, null);
  if (!order || order.status === 'pending') throw orderNotFound();
  return documentData(db, order, null);
}

/** What the invoice of an order shows, read in one go. */
export async function invoiceData(db: Executor, orderId: string): Promise<InvoiceData> {
  const order = await findOrder(db, orderId, null);
  if (!order) throw orderNotFound();
  if (!order.isInvoiceGenerated) throw new CoreError('not_found', 'INVOICE_NOT_GENERATED', 'The invoice of this order has not been generated yet');
  checkEligible(order);
  return documentData(db, order, order.billingName);
}

async function documentData(db: Executor, order: StoredOrder, billingName: string | null): Promise<InvoiceData> {
  const [view] = await viewsOf(db, [order]);
  const customer = view.relations.customers.get(order.customerId)!;
  const organization = await db('organization').where({ id: order.organizationId }).first('name');
  const settings = await db('organization_settings').where({ organization_id: order.organizationId }).first('email', 'website');
  const discount = order.discountId ? view.relations.discounts.get(order.discountId) : undefined;
  const refunds: Refund[] = (await refundsOfOrder(db, order.id)).filter((refund) => refund.status === 'succeeded');
  const payment = order.paymentId ? await findPayment(db, order.paymentId) : undefined;
  return {
    seller: { name: String(organization?.name ?? ''), email: settings?.email ?? null, website: settings?.website ?? null },
    invoiceNumber: order.invoiceNumber,
    issuedAt: order.createdAt,
    status: order.status,
    description: orderDescription(order, view.relations),
    customer: { email: customer.email, billingName: billingName ?? order.billingName ?? customer.name ?? customer.email, billingAddress: order.billingAddress },
    currency: order.currency,
    items: order.items.map((item) => ({ label: item.label, amount: item.amount, taxAmount: item.taxAmount })),
    subtotalAmount: order.subtotalAmount,
    discountAmount: order.discountAmount,
    discountName: discount?.name ?? null,
    netAmount: order.netAmount,
    taxAmount: order.taxAmount,
    totalAmount: order.totalAmount,
    refunds: refunds.map((refund) => ({ createdAt: refund.createdAt, amount: refund.amount, taxAmount: refund.taxAmount, reason: refund.reason })),
    paidWith: payment?.methodBrand && payment.methodLast4 ? `${payment.methodBrand} ending ${payment.methodLast4}` : null,
  };
}

const day = (date: Date) => date.toISOString().slice(0, 10);

function addressLines(address: InvoiceData['customer']['billingAddress']): string[] {
  if (!address) return [];
  const cityLine = [address.postal_code, address.city, address.state].filter(Boolean).join(' ');
  return [address.line1, address.line2, cityLine, address.country].filter((line): line is string => Boolean(line));
}

/**
 * Renders the invoice as a PDF (A4, the standard Helvetica fonts, so it needs no font files). pdfkit is loaded
 * on the first invoice, not when tilld starts: it is one of the largest modules and most daemons never need it.
 */
export async function renderInvoicePdf(data: InvoiceData, kind: OrderDocument = 'invoice'): Promise<Buffer> {
  const title = kind === 'receipt' ? 'Receipt' : 'Invoice';
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({ size: 'A4', margin: 50, info: { Title: `${title} ${data.invoiceNumber}`, Author: data.seller.name, Creator: 'Till' } });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const money = (amount: number) => formatAmount(amount, data.currency);
  const left = 50;
  const right = doc.page.width - 50;
  const width = right - left;

  doc.font('Helvetica-Bold').fontSize(22).text(title, left, 50);
  doc.font('Helvetica').fontSize(10);
  doc.text(`Invoice number: ${data.invoiceNumber}`, left, 85);
  doc.text(`Date of issue: ${day(data.issuedAt)}`);
  doc.text(`Status: ${data.status.replace('_', ' ')}`);

  const top = 150;
  doc.font('Helvetica-Bold').text('From', left, top);
  doc.font('Helvetica').text([data.seller.name, data.seller.email, data.seller.website].filter(Boolean).join('\n'), left, top + 15, { width: width / 2 - 10 });
  doc.font('Helvetica-Bold').text('Bill to', left + width / 2, top);
  doc
    .font('Helvetica')
    .text([data.customer.billingName, data.customer.email, ...addressLines(data.customer.billingAddress)].join('\n'), left + width / 2, top + 15, { width: width / 2 });

  let y = Math.max(doc.y, top + 90) + 20;
  doc.font('Helvetica-Bold').fontSize(12).text(data.description, left, y);
  y = doc.y + 12;

  const columns = { label: left, tax: right - 190, amount: right - 90 };
  const row = (label: string, tax: string, amount: string, bold = false) => {
    if (y > doc.page.height - 90) {
      doc.addPage();
      y = 50;
    }
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(10);
    doc.text(label, columns.label, y, { width: columns.tax - columns.label - 10 });
    const height = doc.y - y;
    doc.text(tax, columns.tax, y, { width: 90, align: 'right' });
    doc.text(amount, columns.amount, y, { width: 90, align: 'right' });
    y += Math.max(height, 14) + 4;
  };
  const rule = () => {
    doc.moveTo(left, y).lineTo(right, y).lineWidth(0.5).strokeColor('#999999').stroke();
    y += 6;
  };

  row('Description', 'Tax', 'Amount', true);
  rule();
  for (const item of data.items) row(item.label, money(item.taxAmount), money(item.amount));
  rule();
  const total = (label: string, amount: string, bold = false) => row(label, '', amount, bold);
  total('Subtotal', money(data.subtotalAmount));
  if (data.discountAmount > 0) total(data.discountName ? `Discount (${data.discountName})` : 'Discount', `-${money(data.discountAmount)}`);
  total('Net amount', money(data.netAmount));
  total('Tax', money(data.taxAmount));
  total('Total', money(data.totalAmount), true);
  if (data.status !== 'pending' && data.paidWith) {
    y += 4;
    doc.font('Helvetica').fontSize(10).text(`Paid ${money(data.totalAmount)} with ${data.paidWith}.`, left, y);
    y = doc.y + 4;
  }

  if (data.refunds.length) {
    y += 10;
    doc.font('Helvetica-Bold').fontSize(12).text('Refunds', left, y);
    y = doc.y + 6;
    let refunded = 0;
    for (const refund of data.refunds) {
      refunded += refund.amount + refund.taxAmount;
      row(`Refund of ${day(refund.createdAt)} (${refund.reason.replace(/_/g, ' ')})`, money(refund.taxAmount), `-${money(refund.amount + refund.taxAmount)}`);
    }
    rule();
    total('Total refunded', `-${money(refunded)}`, true);
    total('Amount kept', money(data.totalAmount - refunded), true);
  }

  doc.end();
  return done;
}
