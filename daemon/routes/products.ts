import { z } from 'zod';
import { createProduct } from '../../core/billing/products/create.js';
import { PRODUCT_SORTING, ProductBenefitsUpdate, ProductCreate, ProductUpdate, VISIBILITIES } from '../../core/billing/products/schema.js';
import { serializeProduct } from '../../core/billing/products/serialize.js';
import { type Access, deleteProduct, getProduct, listProducts, updateProductBenefits } from '../../core/billing/products/service.js';
import { updateProduct } from '../../core/billing/products/update.js';
import { metadataFilters } from '../../core/billing/shared/metadata.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, queryBoolean, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import type { V1Deps } from '../http/v1/deps.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';

const READ = ['products:read', 'products:write'] as const;
const WRITE = ['products:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });

const access = (principal: Principal): Access => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });
const context = (deps: V1Deps) => ({ db: deps.db, clock: deps.clock, baseUrl: deps.baseUrl });

export const productRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/products',
    operationId: 'products:list',
    summary: 'List products (filters: id, organization_id, query, is_archived, is_recurring, benefit_id, visibility, metadata[key])',
    tag: 'products',
    scopes: READ,
    query: PageQuery.extend({
      id: oneOrMany(z.string()).optional(),
      organization_id: oneOrMany(z.string()).optional(),
      query: z.string().optional(),
      is_archived: queryBoolean.optional(),
      is_recurring: queryBoolean.optional(),
      benefit_id: oneOrMany(z.string()).optional(),
      visibility: oneOrMany(z.enum(VISIBILITIES)).optional(),
      sorting: sortingQuery(PRODUCT_SORTING).default(['-created_at']),
    }),
    handler: async ({ principal, query, rawQuery, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const filter = {
        organizationIds,
        ids: query.id,
        query: query.query,
        isArchived: query.is_archived,
        isRecurring: query.is_recurring,
        benefitIds: query.benefit_id,
        visibilities: query.visibility,
        metadata: metadataFilters(rawQuery),
      };
      const page = await listProducts(deps.db, filter, toSortCriteria(query.sorting), query);
      return listResource(page, query, (product) => serializeProduct(product, deps.baseUrl));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/products',
    operationId: 'products:create',
    summary: 'Create a product, one-time or recurring, with its prices (emits product.created)',
    tag: 'products',
    scopes: WRITE,
    status: 201,
    body: ProductCreate,
    handler: async ({ principal, body, deps }) => {
      const organizationId = targetOrganization(principal, body.organization_id, WRITE);
      return serializeProduct(await createProduct(context(deps), organizationId, body), deps.baseUrl);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/products/:id',
    operationId: 'products:get',
    summary: 'Get a product',
    tag: 'products',
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeProduct(await getProduct(deps.db, organizationsWith(principal, READ), params.id), deps.baseUrl),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/products/:id',
    operationId: 'products:update',
    summary: 'Update a product; changed prices archive the ones they replace, is_archived archives it (emits product.updated)',
    tag: 'products',
    scopes: WRITE,
    params: IdParams,
    body: ProductUpdate,
    handler: async ({ principal, params, body, deps }) => serializeProduct(await updateProduct(context(deps), access(principal), params.id, body), deps.baseUrl),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/products/:id',
    operationId: 'products:delete',
    summary: 'Delete a product nothing uses (no orders, subscriptions or trials, discounts, checkouts or checkout links); else 409 ProductNotDeletable: archive it',
    tag: 'products',
    scopes: WRITE,
    status: 204,
    params: IdParams,
    handler: async ({ principal, params, deps }) => {
      await deleteProduct(context(deps), access(principal), params.id);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/products/:id/benefits',
    operationId: 'products:update_benefits',
    summary: "Set a product's benefits, in order (emits product.updated)",
    tag: 'products',
    scopes: WRITE,
    params: IdParams,
    body: ProductBenefitsUpdate,
    handler: async ({ principal, params, body, deps }) =>
      serializeProduct(await updateProductBenefits(context(deps), access(principal), params.id, body), deps.baseUrl),
  }),
];
