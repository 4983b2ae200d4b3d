import { z } from 'zod';
import { GRANT_SORT_PROPERTIES } from '../../core/billing/benefit-grants/schema.js';
import { serializeGrant } from '../../core/billing/benefit-grants/serialize.js';
import { listBenefitGrants, type GrantView } from '../../core/billing/benefit-grants/queries.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import { oneOrMany, queryBoolean, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['benefits:read', 'benefits:write'] as const;
const TAG = 'benefit_grants';

const serialize = (view: GrantView) => serializeGrant(view.grant, view.customer, view.benefit);

export const benefitGrantRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/benefit-grants',
    operationId: 'benefit_grants:list',
    summary: 'List benefit grants (emitted as benefit_grant.created/updated/revoked/cycled)',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      customer_id: oneOrMany(z.string()).optional(),
      external_customer_id: oneOrMany(z.string()).optional(),
      is_granted: queryBoolean.optional(),
      sorting: sortingQuery(GRANT_SORT_PROPERTIES).default(['-created_at']),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const filter = { organizationIds, customerIds: query.customer_id, externalCustomerIds: query.external_customer_id, isGranted: query.is_granted };
      const page = await listBenefitGrants(deps.db, readable, filter, toSortCriteria(query.sorting), query);
      return listResource(page, query, serialize);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/benefits/:id/grants',
    operationId: 'benefits:grants',
    summary: 'List the grants of a benefit',
    tag: 'benefits',
    scopes: READ,
    params: z.object({ id: z.string().min(1) }),
    query: PageQuery.extend({ is_granted: queryBoolean.optional(), customer_id: oneOrMany(z.string()).optional(), member_id: oneOrMany(z.string()).optional() }),
    handler: async ({ principal, params, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const filter = { organizationIds: [...readable], benefitIds: [params.id], customerIds: query.customer_id, isGranted: query.is_granted };
      const page = await listBenefitGrants(deps.db, readable, filter, toSortCriteria(['-created_at']), query, { benefitId: params.id });
      return listResource(page, query, serialize);
    },
  }),
];
