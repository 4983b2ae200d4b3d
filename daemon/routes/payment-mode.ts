import { z } from 'zod';
import { getOrganization } from '../../core/billing/organizations/service.js';
import { organizationPaymentMode } from '../payment-mode.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['organizations:read', 'organizations:write'] as const;

const PaymentModeAnswer = z.object({
  organization_id: z.string(),
  mode: z.enum(['sandbox', 'stripe_live', 'stripe_test', 'not_configured']).describe('not_configured: not a sandbox, and this server has no Stripe: paid checkouts are refused'),
  processor: z.enum(['sandbox', 'stripe']).nullable().describe('The processor that takes its money; null when none can'),
});

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
    response: PaymentModeAnswer,
    handler: async ({ principal, params, deps }): Promise<z.input<typeof PaymentModeAnswer>> => {
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
