import { z } from 'zod';
import { createCustomerSession, customerPortalUrl } from '../../core/billing/customer-sessions/service.js';
import { serializeCustomer } from '../../core/billing/customers/serialize.js';
import { CoreError } from '../../core/errors.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const WRITE = ['customer_sessions:write'] as const;

const ReturnUrl = z.string().url().max(2048).nullish();
/** Till's customers are individuals: as Polar does for an organization without the member model, member ids are ignored. */
const NoMember = z.string().nullish();

/** Polar's CustomerSessionCustomerIDCreate | CustomerSessionCustomerExternalIDCreate. */
export const CustomerSessionCreate = z.union([
  z.object({ customer_id: z.string().min(1), return_url: ReturnUrl, member_id: NoMember, external_member_id: NoMember }).strict(),
  z.object({ external_customer_id: z.string().min(1), return_url: ReturnUrl, member_id: NoMember, external_member_id: NoMember }).strict(),
]);

export const customerSessionRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/customer-sessions',
    operationId: 'customer-sessions:create',
    summary: 'Open a customer session (one hour) for a customer, by id or external id: its token and portal link are in the answer only',
    tag: 'customer-sessions',
    scopes: WRITE,
    status: 201,
    body: CustomerSessionCreate,
    handler: async ({ principal, body, deps }) => {
      const key = 'customer_id' in body ? { id: body.customer_id } : { externalId: body.external_customer_id };
      const { session, token, customer, organization } = await createCustomerSession(deps.db, deps.clock, organizationsWith(principal, WRITE), key, body.return_url ?? null).catch(
        (error: unknown) => {
          // Polar answers an unknown customer here as invalid input on the field that named it.
          if (error instanceof CoreError && error.kind === 'not_found') {
            const field = 'customer_id' in body ? 'customer_id' : 'external_customer_id';
            throw new CoreError('invalid', 'CUSTOMER_DOES_NOT_EXIST', 'Customer does not exist', [
              { loc: ['body', field], msg: 'Customer does not exist.', type: 'value_error' },
            ]);
          }
          throw error;
        },
      );
      return {
        created_at: session.createdAt.toISOString(),
        modified_at: null,
        id: session.id,
        token,
        expires_at: session.expiresAt.toISOString(),
        return_url: session.returnUrl,
        customer_portal_url: customerPortalUrl(deps.baseUrl, organization, token, customer.email),
        customer_id: customer.id,
        customer: serializeCustomer(customer),
      };
    },
  }),
];
