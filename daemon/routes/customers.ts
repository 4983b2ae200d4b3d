import { z } from 'zod';
import { Text } from '../../core/billing/customers/address.js';
import { CustomerCreate, CustomerUpdate, CustomerUpdateExternal, ExternalId } from '../../core/billing/customers/schema.js';
import { exportCustomers } from '../../core/billing/customers/export.js';
import { serializeCustomer } from '../../core/billing/customers/serialize.js';
import { createCustomer, deleteCustomer, getCustomer, listCustomers, updateCustomer, type CustomerReach } from '../../core/billing/customers/service.js';
import { metadataFilters } from '../../core/billing/shared/metadata.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, queryBoolean, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { parseInput } from '../http/validate.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';

const READ = ['customers:read', 'customers:write'] as const;
const WRITE = ['customers:write'] as const;
const TAG = 'customers';

const reach = (principal: Principal): CustomerReach => ({ readable: organizationsWith(principal, READ), writable: organizationsWith(principal, WRITE) });

const IdParams = z.object({ id: Text.min(1) });
const ExternalIdParams = z.object({ external_id: ExternalId });
// Till's addition: a user whose organizations share an external id names the one meant.
const ExternalQuery = z.object({ organization_id: Text.min(1).optional() });
const DeleteQuery = z.object({ anonymize: queryBoolean.default(false) });
// Values of `metadata[key]` filters, which the query schema cannot name.
const MetadataQuery = z.record(z.string(), z.array(Text));

const byExternalId = (params: { external_id: string }, query: { organization_id?: string }) => ({ externalId: params.external_id, organizationId: query.organization_id });

export const customerRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/customers',
    operationId: 'customers:list',
    summary: 'List customers',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      email: Text.optional(),
      query: Text.optional(),
      active: queryBoolean.optional(),
      sorting: sortingQuery(['created_at', 'email', 'name']).default(['-created_at']),
    }),
    handler: async ({ principal, query, rawQuery, deps }) => {
      const metadata = parseInput(MetadataQuery, metadataFilters(rawQuery), 'query');
      const filter = { organizationIds: query.organization_id, email: query.email, query: query.query, active: query.active, metadata };
      const page = await listCustomers(deps.db, organizationsWith(principal, READ), filter, toSortCriteria(query.sorting), query);
      return listResource(page, query, serializeCustomer);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/customers',
    operationId: 'customers:create',
    summary: 'Create a customer (emits customer.created and customer.state_changed)',
    tag: TAG,
    scopes: WRITE,
    status: 201,
    body: CustomerCreate,
    handler: async ({ principal, body, deps }) => {
      const organizationId = targetOrganization(principal, body.organization_id, WRITE);
      return serializeCustomer(await createCustomer(deps.db, deps.clock, organizationId, body));
    },
  }),
  // Before `/:id`, which would read "export" as an id.
  defineRoute({
    method: 'get',
    path: '/v1/customers/export',
    operationId: 'customers:export',
    summary: "Export customers as a CSV file (Polar's columns, oldest first; the list's filters)",
    tag: TAG,
    scopes: READ,
    csv: true,
    query: z.object({
      organization_id: oneOrMany(z.string()).optional(),
      email: Text.optional(),
      query: Text.optional(),
      active: queryBoolean.optional(),
    }),
    handler: async ({ principal, query, rawQuery, deps }) => {
      const metadata = parseInput(MetadataQuery, metadataFilters(rawQuery), 'query');
      const filter = { organizationIds: query.organization_id, email: query.email, query: query.query, active: query.active, metadata };
      return exportCustomers(deps.db, organizationsWith(principal, READ), filter);
    },
  }),
  // The external routes come before `/:id` ones, so `/external/{external_id}/state` is never read as an id.
  defineRoute({
    method: 'get',
    path: '/v1/customers/external/:external_id',
    operationId: 'customers:get_external',
    summary: 'Get a customer by external ID',
    tag: TAG,
    scopes: READ,
    params: ExternalIdParams,
    query: ExternalQuery,
    handler: async ({ principal, params, query, deps }) =>
      serializeCustomer(await getCustomer(deps.db, organizationsWith(principal, READ), byExternalId(params, query))),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/customers/external/:external_id',
    operationId: 'customers:update_external',
    summary: 'Update a customer by external ID (emits customer.updated and customer.state_changed)',
    tag: TAG,
    scopes: WRITE,
    params: ExternalIdParams,
    query: ExternalQuery,
    body: CustomerUpdateExternal,
    handler: async ({ principal, params, query, body, deps }) =>
      serializeCustomer(await updateCustomer(deps.db, deps.clock, reach(principal), byExternalId(params, query), body)),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/customers/external/:external_id',
    operationId: 'customers:delete_external',
    summary: 'Delete a customer by external ID (emits customer.deleted and customer.state_changed)',
    tag: TAG,
    scopes: WRITE,
    status: 204,
    params: ExternalIdParams,
    query: ExternalQuery.extend(DeleteQuery.shape),
    handler: async ({ principal, params, query, deps }) => {
      await deleteCustomer(deps.db, deps.clock, reach(principal), byExternalId(params, query), { anonymize: query.anonymize, baseUrl: deps.baseUrl });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customers/:id',
    operationId: 'customers:get',
    summary: 'Get a customer',
    tag: TAG,
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeCustomer(await getCustomer(deps.db, organizationsWith(principal, READ), { id: params.id })),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/customers/:id',
    operationId: 'customers:update',
    summary: 'Update a customer (emits customer.updated and customer.state_changed)',
    tag: TAG,
    scopes: WRITE,
    params: IdParams,
    body: CustomerUpdate,
    handler: async ({ principal, params, body, deps }) =>
      serializeCustomer(await updateCustomer(deps.db, deps.clock, reach(principal), { id: params.id }, body)),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/customers/:id',
    operationId: 'customers:delete',
    summary: 'Delete a customer; its email and external ID become free (emits customer.deleted and customer.state_changed)',
    tag: TAG,
    scopes: WRITE,
    status: 204,
    params: IdParams,
    query: DeleteQuery,
    handler: async ({ principal, params, query, deps }) => {
      await deleteCustomer(deps.db, deps.clock, reach(principal), { id: params.id }, { anonymize: query.anonymize, baseUrl: deps.baseUrl });
    },
  }),
];
