import { z } from 'zod';
import { Text } from '../../core/billing/customers/address.js';
import { REFUND_SORTING, RefundCreate } from '../../core/billing/refunds/schema.js';
import { serializeRefund } from '../../core/billing/refunds/serialize.js';
import { createRefund, listRefunds } from '../../core/billing/refunds/service.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import { oneOrMany, queryBoolean, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['refunds:read', 'refunds:write'] as const;
const WRITE = ['refunds:write'] as const;
const TAG = 'refunds';
const Ids = oneOrMany(Text.min(1)).optional();

export const refundRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/refunds',
    operationId: 'refunds:list',
    summary: 'List refunds',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend({
      id: Ids,
      organization_id: Ids,
      order_id: Ids,
      subscription_id: Ids,
      customer_id: Ids,
      external_customer_id: Ids,
      succeeded: queryBoolean.optional(),
      sorting: sortingQuery(REFUND_SORTING).default(['-created_at']),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const filter = {
        organizationIds,
        ids: query.id,
        orderIds: query.order_id,
        subscriptionIds: query.subscription_id,
        customerIds: query.customer_id,
        externalCustomerIds: query.external_customer_id,
        succeeded: query.succeeded,
      };
      return listResource(await listRefunds(deps.db, filter, toSortCriteria(query.sorting), query), query, serializeRefund);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/refunds',
    operationId: 'refunds:create',
    summary: 'Refund part or all of a paid order through the payment processor (emits refund.created/updated, order.refunded)',
    tag: TAG,
    scopes: WRITE,
    status: 201,
    body: RefundCreate,
    handler: async ({ principal, body, deps }) => {
      // The order's organization must grant orders reading and refunds writing.
      const read = organizationsWith(principal, [...READ, 'orders:read', 'orders:write']);
      const write = organizationsWith(principal, WRITE);
      return serializeRefund(await createRefund(deps, { read, write }, body));
    },
  }),
];
