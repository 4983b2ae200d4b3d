import { z } from 'zod';
import { Text } from '../../core/billing/customers/address.js';
import { ExternalId } from '../../core/billing/customers/schema.js';
import { getCustomer } from '../../core/billing/customers/service.js';
import { customerStateById, customerStateOf } from '../../core/billing/customer-state/service.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['customers:read', 'customers:write'] as const;
const TAG = 'customers';

/** A customer's state: active subscriptions, granted benefits and active meters (Polar's CustomerState). */
export const customerStateRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/customers/external/:external_id/state',
    operationId: 'customers:get_state_external',
    summary: 'Get a customer\'s state (active subscriptions, granted benefits, active meters) by external ID',
    tag: TAG,
    scopes: READ,
    params: z.object({ external_id: ExternalId }),
    // Till's addition: a user whose organizations share an external id names the one meant.
    query: z.object({ organization_id: Text.min(1).optional() }),
    handler: async ({ principal, params, query, deps }) => {
      const customer = await getCustomer(deps.db, organizationsWith(principal, READ), { externalId: params.external_id, organizationId: query.organization_id });
      return customerStateOf(deps.db, customer);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customers/:id/state',
    operationId: 'customers:get_state',
    summary: 'Get a customer\'s state: active subscriptions, granted benefits, active meters',
    tag: TAG,
    scopes: READ,
    params: z.object({ id: Text.min(1) }),
    handler: async ({ principal, params, deps }) => customerStateById(deps.db, organizationsWith(principal, READ), params.id),
  }),
];
