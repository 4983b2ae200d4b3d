import { z } from 'zod';
import { Text } from '../../core/billing/customers/address.js';
import { ExternalId } from '../../core/billing/customers/schema.js';
import { serializePayment, serializePaymentMethod } from '../../core/billing/payments/serialize.js';
import { getPayment, listCustomerPaymentMethods, listPayments } from '../../core/billing/payments/service.js';
import { listResource, PageQuery, type Page } from '../../core/billing/shared/pagination.js';
import type { PaymentMethod } from '../../core/payments/repository.js';
import { oneOrMany, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['payments:read'] as const;
const CUSTOMERS_READ = ['customers:read', 'customers:write'] as const;
const Ids = oneOrMany(Text.min(1)).optional();

/** A page of saved methods, newest first: the first of the first page is the default. */
export const listMethods = (page: Page<PaymentMethod>, query: PageQuery) => {
  const first = query.page === 1 ? page.items[0]?.id : undefined;
  return listResource(page, query, (method) => serializePaymentMethod(method, method.id === first));
};

export const paymentRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/payments',
    operationId: 'payments:list',
    summary: 'List payments: every attempt to take money, with its status and decline reason',
    tag: 'payments',
    scopes: READ,
    query: PageQuery.extend({
      organization_id: Ids,
      checkout_id: Ids,
      order_id: Ids,
      customer_id: Ids,
      status: oneOrMany(z.enum(['pending', 'succeeded', 'failed'])).optional(),
      method: Ids,
      customer_email: Ids,
      sorting: sortingQuery(['created_at', 'status', 'amount', 'method']).default(['-created_at']),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const filter = {
        organizationIds: query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable],
        checkoutIds: query.checkout_id,
        orderIds: query.order_id,
        customerIds: query.customer_id,
        statuses: query.status,
        methods: query.method,
        customerEmails: query.customer_email,
      };
      return listResource(await listPayments(deps.db, filter, toSortCriteria(query.sorting), query), query, serializePayment);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/payments/:id',
    operationId: 'payments:get',
    summary: 'Get a payment',
    tag: 'payments',
    scopes: READ,
    params: z.object({ id: Text.min(1) }),
    handler: async ({ principal, params, deps }) => serializePayment(await getPayment(deps.db, organizationsWith(principal, READ), params.id)),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customers/external/:external_id/payment-methods',
    operationId: 'customers:list_payment_methods_external',
    summary: 'List the saved payment methods of a customer by external ID (brand, last four, expiry)',
    tag: 'customers',
    scopes: CUSTOMERS_READ,
    params: z.object({ external_id: ExternalId }),
    query: PageQuery.extend({ organization_id: Text.min(1).optional() }),
    handler: async ({ principal, params, query, deps }) => {
      const key = { externalId: params.external_id, organizationId: query.organization_id };
      return listMethods(await listCustomerPaymentMethods(deps.db, organizationsWith(principal, CUSTOMERS_READ), key, query), query);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customers/:id/payment-methods',
    operationId: 'customers:list_payment_methods',
    summary: 'List the saved payment methods of a customer (brand, last four, expiry)',
    tag: 'customers',
    scopes: CUSTOMERS_READ,
    params: z.object({ id: Text.min(1) }),
    query: PageQuery,
    handler: async ({ principal, params, query, deps }) =>
      listMethods(await listCustomerPaymentMethods(deps.db, organizationsWith(principal, CUSTOMERS_READ), { id: params.id }, query), query),
  }),
];
