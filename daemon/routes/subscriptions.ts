import { z } from 'zod';
import { Text } from '../../core/billing/customers/address.js';
import { ExportTimeZone } from '../../core/billing/shared/csv.js';
import { metadataFilters } from '../../core/billing/shared/metadata.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, queryBoolean, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { Timestamp } from '../../core/billing/shared/time.js';
import { CANCELLATION_REASONS, SUBSCRIPTION_SORTING, SUBSCRIPTION_STATUSES, SubscriptionUpdate } from '../../core/billing/subscriptions/schema.js';
import { createFreeSubscription, SubscriptionCreate } from '../../core/billing/subscriptions/create.js';
import { exportSubscriptions, SUBSCRIPTION_EXPORT_COLUMN_NAMES } from '../../core/billing/subscriptions/export.js';
import type { SubscriptionFilter } from '../../core/billing/subscriptions/repository.js';
import { serializeSubscription } from '../../core/billing/subscriptions/serialize.js';
import { getSubscription, listSubscriptions } from '../../core/billing/subscriptions/service.js';
import { revokeSubscription, updateSubscription, type Access, type SubscriptionDeps } from '../../core/billing/subscriptions/update.js';
import { CoreError } from '../../core/errors.js';
import { parseInput } from '../http/validate.js';
import type { V1Deps } from '../http/v1/deps.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['subscriptions:read', 'subscriptions:write'] as const;
const WRITE = ['subscriptions:write'] as const;
const TAG = 'subscriptions';

export const access = (principal: Principal): Access => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });
const IdParams = z.object({ id: Text.min(1) });
const Ids = oneOrMany(Text.min(1)).optional();
const MetadataQuery = z.record(z.string(), z.array(Text));

export function subscriptionDeps(deps: V1Deps): SubscriptionDeps {
  if (!deps.payments) throw new CoreError('conflict', 'NO_PAYMENT_PROCESSOR', 'No payment processor is configured');
  return { db: deps.db, clock: deps.clock, payments: deps.payments, livePayments: deps.livePayments, baseUrl: deps.baseUrl };
}

/** The list's filters, which the export takes too. */
const ListFilters = z.object({
  organization_id: Ids,
  product_id: Ids,
  customer_id: Ids,
  external_customer_id: Ids,
  discount_id: Ids,
  status: oneOrMany(z.enum(SUBSCRIPTION_STATUSES)).optional(),
  active: queryBoolean.optional(),
  cancel_at_period_end: queryBoolean.optional(),
  customer_cancellation_reason: oneOrMany(z.enum(CANCELLATION_REASONS)).optional(),
  canceled_at_after: Timestamp.optional(),
  canceled_at_before: Timestamp.optional(),
  started_after: Timestamp.optional(),
  started_before: Timestamp.optional(),
});

function listFilter(principal: Principal, query: z.infer<typeof ListFilters>, rawQuery: Record<string, unknown>): SubscriptionFilter {
  const readable = organizationsWith(principal, READ);
  return {
    organizationIds: query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable],
    productIds: query.product_id,
    customerIds: query.customer_id,
    externalCustomerIds: query.external_customer_id,
    discountIds: query.discount_id,
    statuses: query.status,
    active: query.active,
    cancelAtPeriodEnd: query.cancel_at_period_end,
    cancellationReasons: query.customer_cancellation_reason,
    startedAfter: query.started_after,
    startedBefore: query.started_before,
    canceledAtAfter: query.canceled_at_after,
    canceledAtBefore: query.canceled_at_before,
    metadata: parseInput(MetadataQuery, metadataFilters(rawQuery), 'query'),
  };
}

export const subscriptionRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/subscriptions',
    operationId: 'subscriptions:list',
    summary: 'List subscriptions',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend(ListFilters.shape).extend({ sorting: sortingQuery(SUBSCRIPTION_SORTING).default(['-started_at']) }),
    handler: async ({ principal, query, rawQuery, deps }) => {
      const filter = listFilter(principal, query, rawQuery);
      const page = await listSubscriptions(deps.db, filter, toSortCriteria(query.sorting), query);
      return listResource(page, query, (view) => serializeSubscription(view, deps.baseUrl));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/subscriptions',
    operationId: 'subscriptions:create',
    summary: 'Subscribe a customer to a free recurring product, without a checkout (no order is made)',
    tag: TAG,
    scopes: WRITE,
    status: 201,
    body: SubscriptionCreate,
    handler: async ({ principal, body, deps }) => serializeSubscription(await createFreeSubscription(subscriptionDeps(deps), access(principal), body), deps.baseUrl),
  }),
  // Before `/:id`, which would read "export" as an id.
  defineRoute({
    method: 'get',
    path: '/v1/subscriptions/export',
    operationId: 'subscriptions:export',
    summary: "Export subscriptions as a CSV file (Polar's columns and filters, timezone; oldest first)",
    tag: TAG,
    scopes: READ,
    csv: true,
    query: ListFilters.extend({
      timezone: ExportTimeZone,
      columns: oneOrMany(z.enum(SUBSCRIPTION_EXPORT_COLUMN_NAMES)).optional(),
    }),
    handler: async ({ principal, query, rawQuery, deps }) => {
      return exportSubscriptions(deps.db, listFilter(principal, query, rawQuery), { timeZone: query.timezone, columns: query.columns });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/subscriptions/:id',
    operationId: 'subscriptions:get',
    summary: 'Get a subscription',
    tag: TAG,
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeSubscription(await getSubscription(deps.db, organizationsWith(principal, READ), params.id), deps.baseUrl),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/subscriptions/:id',
    operationId: 'subscriptions:update',
    summary: 'Update a subscription: cancel at period end or uncancel, revoke now, change product (invoice or prorate), change discount',
    tag: TAG,
    scopes: WRITE,
    params: IdParams,
    body: SubscriptionUpdate,
    handler: async ({ principal, params, body, deps }) =>
      serializeSubscription(await updateSubscription(subscriptionDeps(deps), access(principal), params.id, body), deps.baseUrl),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/subscriptions/:id',
    operationId: 'subscriptions:revoke',
    summary: 'Revoke a subscription now (benefits revoked, no more renewals)',
    tag: TAG,
    scopes: WRITE,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeSubscription(await revokeSubscription(subscriptionDeps(deps), access(principal), params.id), deps.baseUrl),
  }),
];
