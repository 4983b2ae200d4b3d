import { z } from 'zod';
import { DISCOUNT_SORTING, DiscountCreate, DiscountUpdate } from '../../core/billing/discounts/schema.js';
import { serializeDiscount } from '../../core/billing/discounts/serialize.js';
import { createDiscount, deleteDiscount, getDiscount, listDiscounts, updateDiscount } from '../../core/billing/discounts/service.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';

const READ = ['discounts:read', 'discounts:write'] as const;
const WRITE = ['discounts:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });

const access = (principal: Principal) => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });

export const discountRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/discounts',
    operationId: 'discounts:list',
    summary: 'List discounts',
    tag: 'discounts',
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      query: z.string().optional(),
      sorting: sortingQuery(DISCOUNT_SORTING).default(['-created_at']),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const page = await listDiscounts(deps.db, { organizationIds, query: query.query }, toSortCriteria(query.sorting), query);
      return listResource(page, query, serializeDiscount);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/discounts',
    operationId: 'discounts:create',
    summary: 'Create a discount (fixed or percentage; once, forever or repeating)',
    tag: 'discounts',
    scopes: WRITE,
    status: 201,
    body: DiscountCreate,
    handler: async ({ principal, body, deps }) => {
      const organizationId = targetOrganization(principal, body.organization_id, WRITE);
      return serializeDiscount(await createDiscount(deps.db, deps.clock, organizationId, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/discounts/:id',
    operationId: 'discounts:get',
    summary: 'Get a discount',
    tag: 'discounts',
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeDiscount(await getDiscount(deps.db, organizationsWith(principal, READ), params.id)),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/discounts/:id',
    operationId: 'discounts:update',
    summary: 'Update a discount (type and duration stay; the amount stays once redeemed)',
    tag: 'discounts',
    scopes: WRITE,
    params: IdParams,
    body: DiscountUpdate,
    handler: async ({ principal, params, body, deps }) => serializeDiscount(await updateDiscount(deps.db, deps.clock, access(principal), params.id, body)),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/discounts/:id',
    operationId: 'discounts:delete',
    summary: 'Delete a discount (its code is free again)',
    tag: 'discounts',
    scopes: WRITE,
    status: 204,
    params: IdParams,
    handler: async ({ principal, params, deps }) => {
      await deleteDiscount(deps.db, deps.clock, access(principal), params.id);
    },
  }),
];
