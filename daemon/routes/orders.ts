import { Router, type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { Text } from '../../core/billing/customers/address.js';
import { generateInvoice, invoiceData, invoiceLink, receiptData, receiptLink, renderInvoicePdf, verifyInvoiceSignature, type OrderDocument } from '../../core/billing/orders/invoice.js';
import { exportOrders, ORDER_EXPORT_COLUMN_NAMES } from '../../core/billing/orders/export.js';
import { ORDER_SORTING, ORDER_STATUSES, OrderUpdate, type OrderFilter } from '../../core/billing/orders/schema.js';
import { getOrder, listOrders, serializeOrderView, updateOrder, type Access } from '../../core/billing/orders/service.js';
import { ExportTimeZone } from '../../core/billing/shared/csv.js';
import { metadataFilters } from '../../core/billing/shared/metadata.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { Timestamp } from '../../core/billing/shared/time.js';
import { CoreError } from '../../core/errors.js';
import { parseInput } from '../http/validate.js';
import type { V1Deps } from '../http/v1/deps.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['orders:read', 'orders:write'] as const;
const WRITE = ['orders:write'] as const;
const TAG = 'orders';

const access = (principal: Principal): Access => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });
const IdParams = z.object({ id: Text.min(1) });
const Ids = oneOrMany(Text.min(1)).optional();
const MetadataQuery = z.record(z.string(), z.array(Text));
const secretOf = async (deps: V1Deps) => (await deps.auth.$context).secret;

/** The list's filters, which the export takes too. */
const ListFilters = z.object({
  organization_id: Ids,
  product_id: Ids,
  product_billing_type: oneOrMany(z.enum(['one_time', 'recurring'])).optional(),
  // The name older Polar clients send for the same filter.
  product_price_type: oneOrMany(z.enum(['one_time', 'recurring'])).optional(),
  discount_id: Ids,
  customer_id: Ids,
  external_customer_id: Ids,
  checkout_id: Ids,
  subscription_id: Ids,
  status: oneOrMany(z.enum(ORDER_STATUSES)).optional(),
  created_after: Timestamp.optional(),
  created_before: Timestamp.optional(),
});

function listFilter(principal: Principal, query: z.infer<typeof ListFilters>, rawQuery: Record<string, unknown>): OrderFilter {
  const readable = organizationsWith(principal, READ);
  return {
    organizationIds: query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable],
    productIds: query.product_id,
    productPriceTypes: query.product_billing_type ?? query.product_price_type,
    discountIds: query.discount_id,
    customerIds: query.customer_id,
    externalCustomerIds: query.external_customer_id,
    checkoutIds: query.checkout_id,
    subscriptionIds: query.subscription_id,
    statuses: query.status,
    createdAfter: query.created_after,
    createdBefore: query.created_before,
    metadata: parseInput(MetadataQuery, metadataFilters(rawQuery), 'query'),
  };
}

export const orderRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/orders',
    operationId: 'orders:list',
    summary: 'List orders',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend(ListFilters.shape).extend({ sorting: sortingQuery(ORDER_SORTING).default(['-created_at']) }),
    handler: async ({ principal, query, rawQuery, deps }) => {
      const filter = listFilter(principal, query, rawQuery);
      const page = await listOrders(deps.db, filter, toSortCriteria(query.sorting), query);
      return listResource(page, query, serializeOrderView);
    },
  }),
  // Before `/:id`, which would read "export" as an id.
  defineRoute({
    method: 'get',
    path: '/v1/orders/export',
    operationId: 'orders:export',
    summary: "Export orders as a CSV file (Polar's columns and filters, timezone; oldest first)",
    tag: TAG,
    scopes: READ,
    csv: true,
    query: ListFilters.extend({
      timezone: ExportTimeZone,
      columns: oneOrMany(z.enum(ORDER_EXPORT_COLUMN_NAMES)).optional(),
    }),
    handler: async ({ principal, query, rawQuery, deps }) => {
      return exportOrders(deps.db, listFilter(principal, query, rawQuery), { timeZone: query.timezone, columns: query.columns });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/orders/:id',
    operationId: 'orders:get',
    summary: 'Get an order',
    tag: TAG,
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeOrderView(await getOrder(deps.db, organizationsWith(principal, READ), params.id)),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/orders/:id',
    operationId: 'orders:update',
    summary: 'Update an order’s billing name and address (what its invoice shows; emits order.updated)',
    tag: TAG,
    scopes: WRITE,
    params: IdParams,
    body: OrderUpdate,
    handler: async ({ principal, params, body, deps }) => serializeOrderView(await updateOrder(deps.db, deps.clock, access(principal), params.id, body)),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/orders/:id/invoice',
    operationId: 'orders:generate_invoice',
    summary: 'Generate the order’s invoice (needs a paid order with a billing name and address; emits order.updated)',
    tag: TAG,
    // As Polar: reading orders is enough to have an invoice made (it changes nothing the seller set).
    scopes: READ,
    status: 202,
    response: null,
    params: IdParams,
    handler: async ({ principal, params, deps }) => {
      const readable = organizationsWith(principal, READ);
      await generateInvoice(deps.db, deps.clock, { read: readable, write: readable }, params.id);
      return null;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/orders/:id/invoice',
    operationId: 'orders:invoice',
    summary: 'Get a link to the order’s invoice PDF, valid for an hour (generated on first ask)',
    tag: TAG,
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) =>
      invoiceLink(deps.db, deps.clock, access(principal), params.id, { baseUrl: deps.baseUrl, secret: await secretOf(deps), now: deps.clock.now() }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/orders/:id/receipt',
    operationId: 'orders:receipt',
    summary: 'Get a link to the receipt PDF of a paid order, valid for an hour; 404 ReceiptNotAllocated while the order is not paid',
    tag: TAG,
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) =>
      receiptLink(deps.db, access(principal), params.id, { baseUrl: deps.baseUrl, secret: await secretOf(deps), now: deps.clock.now() }),
  }),
];

/** The invoice PDF itself, served as bytes at the signed link that `GET /v1/orders/{id}/invoice` hands out. */
export function invoiceRouter(deps: V1Deps): Router {
  const router = Router();

  const serve = (kind: OrderDocument) => async (req: Request<{ id: string }>, res: Response, next: NextFunction) => {
    try {
      const expires = typeof req.query.expires === 'string' ? req.query.expires : '';
      const signature = typeof req.query.signature === 'string' ? req.query.signature : '';
      if (!verifyInvoiceSignature(await secretOf(deps), req.params.id, expires, signature, deps.clock.now(), kind)) {
        throw new CoreError('forbidden', kind === 'receipt' ? 'INVALID_RECEIPT_LINK' : 'INVALID_INVOICE_LINK', `This ${kind} link is invalid or has expired: ask GET /v1/orders/{id}/${kind} for a new one`);
      }
      const data = kind === 'receipt' ? await receiptData(deps.db, req.params.id) : await invoiceData(deps.db, req.params.id);
      const pdf = await renderInvoicePdf(data, kind);
      res.setHeader('Content-Type', 'application/pdf');
      res.setHeader('Content-Length', String(pdf.length));
      res.setHeader('Content-Disposition', `inline; filename="${kind === 'receipt' ? 'Receipt' : 'Invoice'}-${data.invoiceNumber}.pdf"`);
      res.setHeader('Cache-Control', 'private, no-store');
      res.status(200).end(pdf);
    } catch (error) {
      next(error);
    }
  };
  router.get('/v1/orders/:id/invoice.pdf', serve('invoice'));
  router.get('/v1/orders/:id/receipt.pdf', serve('receipt'));
  return router;
}
