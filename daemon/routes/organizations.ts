import { z } from 'zod';
import { OrganizationCreate, OrganizationUpdate } from '../../core/billing/organizations/schema.js';
import { serializeOrganization } from '../../core/billing/organizations/serialize.js';
import { createOrganization, getOrganization, listOrganizations, updateOrganization } from '../../core/billing/organizations/service.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import { sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { defineRoute, organizationsWith, requireScope } from '../http/v1/route.js';

const READ = ['organizations:read', 'organizations:write'] as const;
const WRITE = ['organizations:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });

export const organizationRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/organizations',
    operationId: 'organizations:list',
    summary: 'List the organizations you reach',
    tag: 'organizations',
    scopes: READ,
    query: PageQuery.extend({ slug: z.string().optional(), sorting: sortingQuery(['created_at', 'name', 'slug']).default(['created_at']) }),
    handler: async ({ principal, query, deps }) => {
      const page = await listOrganizations(deps.db, organizationsWith(principal, READ), { slug: query.slug }, toSortCriteria(query.sorting), query);
      return listResource(page, query, serializeOrganization);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/organizations',
    operationId: 'organizations:create',
    summary: 'Create an organization; you become its owner',
    tag: 'organizations',
    scopes: WRITE,
    // An access token belongs to one organization and cannot found another.
    userOnly: true,
    body: OrganizationCreate,
    status: 201,
    handler: async ({ principal, body, deps }) => {
      if (principal.kind !== 'user') throw new Error('userOnly route reached without a user');
      return serializeOrganization(await createOrganization(deps.db, deps.clock, principal.userId, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/organizations/:id',
    operationId: 'organizations:get',
    summary: 'Get an organization',
    tag: 'organizations',
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeOrganization(await getOrganization(deps.db, organizationsWith(principal, READ), params.id)),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/organizations/:id',
    operationId: 'organizations:update',
    summary: 'Update an organization (emits organization.updated)',
    tag: 'organizations',
    scopes: WRITE,
    params: IdParams,
    body: OrganizationUpdate,
    handler: async ({ principal, params, body, deps }) => {
      requireScope(principal, WRITE, params.id);
      return serializeOrganization(await updateOrganization(deps.db, deps.clock, organizationsWith(principal, WRITE), params.id, body));
    },
  }),
];
