import { z } from 'zod';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import { oneOrMany, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { getCustomerMeter, listCustomerMeters, type CustomerMeterView } from '../../core/metering/customer-meters.js';
import { CUSTOMER_METER_SORTING } from '../../core/metering/schema.js';
import { serializeCustomerMeter } from '../../core/metering/serialize.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

// Polar gates customer meters with its customer_meters:read scope alone; Till also lets the meter scopes read
// them, as it did before it knew that scope, so tokens minted then keep working.
const READ = ['customer_meters:read', 'meters:read', 'meters:write'] as const;
const TAG = 'customer-meters';
const toWire = (view: CustomerMeterView) => serializeCustomerMeter(view.customerMeter, view.customer, view.meter);

export const customerMeterRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/customer-meters',
    operationId: 'customer_meters:list',
    summary: "List customer meters: each customer's consumption, credits and balance on a meter",
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      customer_id: oneOrMany(z.string()).optional(),
      external_customer_id: oneOrMany(z.string()).optional(),
      meter_id: oneOrMany(z.string()).optional(),
      sorting: sortingQuery(CUSTOMER_METER_SORTING).default(['-modified_at']),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const filter = { organizationIds, customerIds: query.customer_id, externalCustomerIds: query.external_customer_id, meterIds: query.meter_id };
      return listResource(await listCustomerMeters(deps.db, filter, toSortCriteria(query.sorting), query), query, toWire);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-meters/:id',
    operationId: 'customer_meters:get',
    summary: 'Get a customer meter',
    tag: TAG,
    scopes: READ,
    params: z.object({ id: z.string().min(1) }),
    handler: async ({ principal, params, deps }) => toWire(await getCustomerMeter(deps.db, organizationsWith(principal, READ), params.id)),
  }),
];
