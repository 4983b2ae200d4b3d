import { z } from 'zod';
import { getOrganization } from '../../core/billing/organizations/service.js';
import { organizationPaymentMode } from '../payment-mode.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['organizations:read', 'organizations:write'] as const;

/** Which mode an organization takes money in (a Till extension of Polar's API; `till status` shows it). */
export const paymentModeRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/organizations/:id/payment-mode',
    operationId: 'organizations:payment_mode:get',
    summary: 'How an organization takes money: sandbox, Stripe (live or test mode), or not configured (paid checkouts refused)',
    tag: 'organizations',
    scopes: READ,
    params: z.object({ id: z.string().min(1) }),
    handler: async ({ principal, params, deps }) => {
      const organization = await getOrganization(deps.db, organizationsWith(principal, READ), params.id);
      const mode = await organizationPaymentMode(deps, organization.id);
      return {
        organization_id: organization.id,
        mode,
        processor: mode === 'sandbox' ? 'sandbox' : mode === 'not_configured' ? null : 'stripe',
      };
    },
  }),
];
