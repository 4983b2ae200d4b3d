import { z } from 'zod';
import { CUSTOM_FIELD_SORTING, CUSTOM_FIELD_TYPES, CustomFieldCreate, CustomFieldUpdate } from '../../core/billing/custom-fields/schema.js';
import { serializeCustomField } from '../../core/billing/custom-fields/serialize.js';
import { createCustomField, deleteCustomField, getCustomField, listCustomFields, updateCustomField } from '../../core/billing/custom-fields/service.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';

const READ = ['custom_fields:read', 'custom_fields:write'] as const;
const WRITE = ['custom_fields:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });

const access = (principal: Principal) => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });

export const customFieldRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/custom-fields',
    operationId: 'custom-fields:list',
    summary: 'List custom fields',
    tag: 'custom-fields',
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      query: z.string().optional(),
      type: oneOrMany(z.enum(CUSTOM_FIELD_TYPES)).optional(),
      sorting: sortingQuery(CUSTOM_FIELD_SORTING).default(['slug']),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const page = await listCustomFields(deps.db, { organizationIds, query: query.query, types: query.type }, toSortCriteria(query.sorting), query);
      return listResource(page, query, serializeCustomField);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/custom-fields',
    operationId: 'custom-fields:create',
    summary: 'Create a custom field (checkbox, date, number, select or text)',
    tag: 'custom-fields',
    scopes: WRITE,
    status: 201,
    body: CustomFieldCreate,
    handler: async ({ principal, body, deps }) => {
      const organizationId = targetOrganization(principal, body.organization_id, WRITE);
      return serializeCustomField(await createCustomField(deps.db, deps.clock, organizationId, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/custom-fields/:id',
    operationId: 'custom-fields:get',
    summary: 'Get a custom field',
    tag: 'custom-fields',
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeCustomField(await getCustomField(deps.db, organizationsWith(principal, READ), params.id)),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/custom-fields/:id',
    operationId: 'custom-fields:update',
    summary: 'Update a custom field (its type stays)',
    tag: 'custom-fields',
    scopes: WRITE,
    params: IdParams,
    body: CustomFieldUpdate,
    handler: async ({ principal, params, body, deps }) => serializeCustomField(await updateCustomField(deps.db, deps.clock, access(principal), params.id, body)),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/custom-fields/:id',
    operationId: 'custom-fields:delete',
    summary: 'Delete a custom field (its slug stays reserved)',
    tag: 'custom-fields',
    scopes: WRITE,
    status: 204,
    params: IdParams,
    handler: async ({ principal, params, deps }) => {
      await deleteCustomField(deps.db, deps.clock, access(principal), params.id);
    },
  }),
];
