import { z } from 'zod';
import { Text } from '../../core/billing/customers/address.js';
import { DISPUTE_SORTING, DisputeStatus } from '../../core/billing/disputes/schema.js';
import { serializeDispute } from '../../core/billing/disputes/serialize.js';
import { acceptDispute, getDispute, listDisputes } from '../../core/billing/disputes/service.js';
import { CoreError } from '../../core/errors.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import { oneOrMany, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['disputes:read', 'disputes:write'] as const;
const WRITE = ['disputes:write'] as const;
const TAG = 'disputes';
const Ids = oneOrMany(Text.min(1)).optional();
const IdParams = z.object({ id: z.string().min(1) });

export const disputeRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/disputes',
    operationId: 'disputes:list',
    summary: 'List disputes (chargebacks the payment processor reported)',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend({
      organization_id: Ids,
      order_id: Ids,
      status: oneOrMany(DisputeStatus).optional(),
      sorting: sortingQuery(DISPUTE_SORTING).default(['-created_at']),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const filter = { organizationIds, orderIds: query.order_id, statuses: query.status };
      return listResource(await listDisputes(deps.db, filter, toSortCriteria(query.sorting), query), query, serializeDispute);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/disputes/:id',
    operationId: 'disputes:get',
    summary: 'Get a dispute',
    tag: TAG,
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeDispute(await getDispute(deps.db, organizationsWith(principal, READ), params.id)),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/disputes/:id/accept',
    operationId: 'disputes:accept',
    summary: 'Accept a dispute, conceding the chargeback: the processor closes it as lost, and the order\'s benefits are revoked',
    tag: TAG,
    scopes: WRITE,
    params: IdParams,
    handler: async ({ principal, params, deps }) => {
      const stripe = deps.stripe;
      const closeAtProcessor = async (dispute: { processor: string; processorDisputeId: string }) => {
        if (dispute.processor !== 'stripe' || !stripe) throw new CoreError('conflict', 'PROCESSOR_UNAVAILABLE', `The dispute came from the ${dispute.processor} processor, which this daemon is not configured with`);
        return stripe.closeDispute(dispute.processorDisputeId);
      };
      return serializeDispute(await acceptDispute({ db: deps.db, clock: deps.clock, baseUrl: deps.baseUrl, closeAtProcessor }, organizationsWith(principal, WRITE), params.id));
    },
  }),
];
