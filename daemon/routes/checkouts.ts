import { z } from 'zod';
import { CHECKOUT_SORTING, CHECKOUT_STATUSES, CheckoutConfirm, CheckoutCreate, CheckoutUpdate, CheckoutUpdatePublic } from '../../core/billing/checkouts/schema.js';
import { serializeCheckout, serializeCheckoutConfirmed, serializeCheckoutPublic } from '../../core/billing/checkouts/serialize.js';
import {
  checkoutOrganization,
  confirmCheckout,
  createCheckout,
  getCheckout,
  getCheckoutByClientSecret,
  listCheckouts,
  updateCheckout,
  updateCheckoutPublic,
  type CheckoutDeps,
} from '../../core/billing/checkouts/service.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import type { V1Deps } from '../http/v1/deps.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';

const READ = ['checkouts:read', 'checkouts:write'] as const;
const WRITE = ['checkouts:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });
const SecretParams = z.object({ client_secret: z.string().min(1).max(200) });

const access = (principal: Principal) => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });
const checkoutDeps = (deps: V1Deps): CheckoutDeps => ({ db: deps.db, clock: deps.clock, payments: deps.payments, livePayments: deps.livePayments, liveRequired: deps.liveRequired, baseUrl: deps.baseUrl });

export const checkoutRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/checkouts',
    operationId: 'checkouts:list',
    summary: 'List checkouts',
    tag: 'checkouts',
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      product_id: oneOrMany(z.string()).optional(),
      customer_id: oneOrMany(z.string()).optional(),
      external_customer_id: oneOrMany(z.string()).optional(),
      status: oneOrMany(z.enum(CHECKOUT_STATUSES)).optional(),
      query: z.string().max(256).optional(),
      sorting: sortingQuery(CHECKOUT_SORTING).default(['-created_at']),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const filter = { organizationIds, productIds: query.product_id, customerIds: query.customer_id, externalCustomerIds: query.external_customer_id, statuses: query.status, query: query.query };
      const page = await listCheckouts(checkoutDeps(deps), filter, toSortCriteria(query.sorting), query);
      return listResource(page, query, (checkout) => serializeCheckout(checkout, deps.baseUrl));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/checkouts',
    operationId: 'checkouts:create',
    summary: 'Create a checkout for one or more products (the first is selected)',
    tag: 'checkouts',
    scopes: WRITE,
    status: 201,
    body: CheckoutCreate,
    handler: async ({ principal, body, deps }) => {
      const organizationId = body.organization_id
        ? targetOrganization(principal, body.organization_id, WRITE)
        : await checkoutOrganization(deps.db, body, organizationsWith(principal, WRITE));
      return serializeCheckout(await createCheckout(checkoutDeps(deps), organizationId, body), deps.baseUrl);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/checkouts/:id',
    operationId: 'checkouts:get',
    summary: 'Get a checkout',
    tag: 'checkouts',
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeCheckout(await getCheckout(checkoutDeps(deps), organizationsWith(principal, READ), params.id), deps.baseUrl),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/checkouts/:id',
    operationId: 'checkouts:update',
    summary: 'Update an open checkout',
    tag: 'checkouts',
    scopes: WRITE,
    params: IdParams,
    body: CheckoutUpdate,
    handler: async ({ principal, params, body, deps }) => serializeCheckout(await updateCheckout(checkoutDeps(deps), access(principal), params.id, body), deps.baseUrl),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/checkouts/client/:client_secret',
    operationId: 'checkouts:client_get',
    summary: 'Get a checkout by its client secret (no credentials: the customer’s browser)',
    tag: 'checkouts',
    scopes: READ,
    public: true,
    params: SecretParams,
    handler: async ({ params, deps }) => serializeCheckoutPublic(await getCheckoutByClientSecret(checkoutDeps(deps), params.client_secret, { refuseExpired: true }), deps.baseUrl),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/checkouts/client/:client_secret',
    operationId: 'checkouts:client_update',
    summary: 'Fill in an open checkout: customer, billing address, discount code, custom fields (no credentials)',
    tag: 'checkouts',
    scopes: WRITE,
    public: true,
    params: SecretParams,
    body: CheckoutUpdatePublic,
    handler: async ({ params, body, deps }) => serializeCheckoutPublic(await updateCheckoutPublic(checkoutDeps(deps), params.client_secret, body), deps.baseUrl),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/checkouts/client/:client_secret/confirm',
    operationId: 'checkouts:client_confirm',
    summary: 'Pay a checkout; in the sandbox, confirmation_token_id names a test token such as tok_visa (no credentials)',
    tag: 'checkouts',
    scopes: WRITE,
    public: true,
    params: SecretParams,
    body: CheckoutConfirm,
    handler: async ({ params, body, deps }) => serializeCheckoutConfirmed(await confirmCheckout(checkoutDeps(deps), params.client_secret, body), deps.baseUrl),
  }),
];
