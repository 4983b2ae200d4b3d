import { z } from 'zod';
import { connectGrantAccount } from '../../core/billing/benefit-grants/connect-account.js';
import { SDK_BENEFIT_TYPES } from '../../core/billing/benefits/schema.js';
import { serializeCustomerGrant } from '../../core/billing/customer-sessions/serialize.js';
import { listOAuthAccountNames } from '../../core/billing/oauth-accounts/repository.js';
import { Text } from '../../core/billing/customers/address.js';
import { findOrganization } from '../../core/billing/organizations/repository.js';
import { CoreError } from '../../core/errors.js';
import { defineRoute } from '../http/v1/route.js';

// The customer portal's benefit grant update (Polar's customerPortal.benefitGrants.update): a customer names the
// connected GitHub or Discord account a grant gives access to. Kept apart from customer-portal.ts, which other
// portal operations share.

const TAG = 'customer-portal';

const NEEDS_ACCOUNT: ReadonlySet<string> = new Set(['discord', 'github_repository']);

/** Polar's CustomerBenefitGrantUpdate: `benefit_type` selects the form; Discord and GitHub carry `properties.account_id`. */
const CustomerBenefitGrantUpdate = z
  .object({
    benefit_type: z.enum(SDK_BENEFIT_TYPES),
    properties: z.object({ account_id: Text.min(1).max(100).nullable() }).optional(),
  })
  .superRefine((body, ctx) => {
    if (NEEDS_ACCOUNT.has(body.benefit_type) && !body.properties) ctx.addIssue({ code: 'custom', path: ['properties'], message: 'Field required' });
  });

export const customerPortalGrantRoutes = [
  defineRoute({
    method: 'patch',
    path: '/v1/customer-portal/benefit-grants/:id',
    operationId: 'customer_portal:benefit_grants:update',
    summary: 'Connect one of the customer’s GitHub or Discord accounts to a benefit grant; the grant’s job then gives it access',
    tag: TAG,
    scopes: [],
    portal: true,
    params: z.object({ id: Text.min(1) }),
    body: CustomerBenefitGrantUpdate,
    handler: async ({ customer, params, body, deps }) => {
      const { grant, customer: me, benefit } = await connectGrantAccount(deps.db, deps.clock, customer, params.id, {
        benefitType: body.benefit_type,
        accountId: body.properties?.account_id ?? null,
      });
      const organization = await findOrganization(deps.db, customer.organizationId);
      if (!organization) throw new CoreError('not_found', 'BENEFIT_GRANT_NOT_FOUND', 'Benefit grant not found');
      return serializeCustomerGrant(grant, me, await listOAuthAccountNames(deps.db, me.id), benefit, organization);
    },
  }),
];
