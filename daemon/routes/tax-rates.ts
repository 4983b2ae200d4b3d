import { z } from 'zod';
import { TaxRateCreate } from '../../core/billing/tax-rates/schema.js';
import { serializeTaxRate, TaxRateAnswer } from '../../core/billing/tax-rates/serialize.js';
import { createTaxRate, deleteTaxRate, getTaxRate, listTaxRates } from '../../core/billing/tax-rates/service.js';
import { ListAnswer, listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import { oneOrMany } from '../../core/billing/shared/query.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';

// Tax rates are part of what a product costs: the product scopes cover them.
const READ = ['products:read', 'products:write'] as const;
const WRITE = ['products:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });

/** Till's extension: the rates an organization charges, by country and optionally state, on the net amount. */
export const taxRateRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/tax-rates',
    operationId: 'tax_rates:list',
    summary: 'List tax rates (Till extension)',
    tag: 'tax-rates',
    scopes: READ,
    query: PageQuery.extend({ organization_id: oneOrMany(z.string()).optional(), country: z.string().length(2).optional() }),
    response: ListAnswer(TaxRateAnswer),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      return listResource(await listTaxRates(deps.db, { organizationIds, country: query.country }, query), query, serializeTaxRate);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/tax-rates',
    operationId: 'tax_rates:create',
    summary: 'Charge a tax rate in a country or one of its states (Till extension)',
    tag: 'tax-rates',
    scopes: WRITE,
    status: 201,
    body: TaxRateCreate,
    response: TaxRateAnswer,
    handler: async ({ principal, body, deps }) => {
      const organizationId = targetOrganization(principal, body.organization_id, WRITE);
      return serializeTaxRate(await createTaxRate(deps.db, deps.clock, organizationId, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/tax-rates/:id',
    operationId: 'tax_rates:get',
    summary: 'Get a tax rate (Till extension)',
    tag: 'tax-rates',
    scopes: READ,
    params: IdParams,
    response: TaxRateAnswer,
    handler: async ({ principal, params, deps }) => serializeTaxRate(await getTaxRate(deps.db, organizationsWith(principal, READ), params.id)),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/tax-rates/:id',
    operationId: 'tax_rates:delete',
    summary: 'Stop charging a tax rate (Till extension)',
    tag: 'tax-rates',
    scopes: WRITE,
    status: 204,
    params: IdParams,
    handler: async ({ principal, params, deps }) => {
      await deleteTaxRate(deps.db, { read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) }, params.id);
    },
  }),
];
