import { z } from 'zod';
import { guildTokenKey } from '../../core/billing/benefits/guild-token.js';
import { BenefitCreate, BenefitUpdate, SDK_BENEFIT_TYPES } from '../../core/billing/benefits/schema.js';
import { serializeBenefit } from '../../core/billing/benefits/serialize.js';
import { createBenefit, deleteBenefit, getBenefit, listBenefits, updateBenefit, type BenefitAccess } from '../../core/billing/benefits/service.js';
import { metadataFilters } from '../../core/billing/shared/metadata.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import type { V1Deps } from '../http/v1/deps.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';

const READ = ['benefits:read', 'benefits:write'] as const;
const WRITE = ['benefits:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });

const accessOf = (principal: Principal): BenefitAccess => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });

/** Guild tokens are signed with a key derived from the daemon's secret (the one Better Auth signs with). */
const guildKeyOf = async (deps: V1Deps) => guildTokenKey((await deps.auth.$context).secret);

export const benefitRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/benefits',
    operationId: 'benefits:list',
    summary: 'List benefits',
    tag: 'benefits',
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      type: oneOrMany(z.enum(SDK_BENEFIT_TYPES)).optional(),
      id: oneOrMany(z.string()).optional(),
      exclude_id: oneOrMany(z.string()).optional(),
      query: z.string().optional(),
      sorting: sortingQuery(['created_at', 'description', 'type', 'user_order']).default(['-created_at']),
    }),
    handler: async ({ principal, query, rawQuery, deps }) => {
      const reachable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => reachable.has(id)) : [...reachable];
      const page = await listBenefits(
        deps.db,
        { organizationIds, types: query.type, ids: query.id, excludeIds: query.exclude_id, query: query.query, metadata: metadataFilters(rawQuery) },
        toSortCriteria(query.sorting),
        query,
      );
      return listResource(page, query, serializeBenefit);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/benefits',
    operationId: 'benefits:create',
    summary: 'Create a benefit (emits benefit.created)',
    tag: 'benefits',
    scopes: WRITE,
    status: 201,
    body: BenefitCreate,
    handler: async ({ principal, body, deps }) => {
      const organizationId = targetOrganization(principal, body.organization_id, WRITE);
      return serializeBenefit(await createBenefit(deps.db, deps.clock, { organizationId, request: body, guildKey: await guildKeyOf(deps) }));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/benefits/:id',
    operationId: 'benefits:get',
    summary: 'Get a benefit',
    tag: 'benefits',
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeBenefit(await getBenefit(deps.db, organizationsWith(principal, READ), params.id)),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/benefits/:id',
    operationId: 'benefits:update',
    summary: 'Update a benefit; its type cannot change (emits benefit.updated)',
    tag: 'benefits',
    scopes: WRITE,
    params: IdParams,
    body: BenefitUpdate,
    handler: async ({ principal, params, body, deps }) =>
      serializeBenefit(await updateBenefit(deps.db, deps.clock, accessOf(principal), params.id, { request: body, guildKey: await guildKeyOf(deps) })),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/benefits/:id',
    operationId: 'benefits:delete',
    summary: 'Delete a benefit (soft; emits benefit.updated with is_deleted)',
    tag: 'benefits',
    scopes: WRITE,
    status: 204,
    params: IdParams,
    handler: async ({ principal, params, deps }) => {
      await deleteBenefit(deps.db, deps.clock, accessOf(principal), params.id);
    },
  }),
];
