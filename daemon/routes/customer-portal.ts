import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { grantDownloads } from '../../core/billing/benefit-grants/downloads.js';
import { findGrant, listGrants } from '../../core/billing/benefit-grants/repository.js';
import { findBenefit } from '../../core/billing/benefits/repository.js';
import type { Benefit } from '../../core/billing/benefits/schema.js';
import { deleteOwnPaymentMethod, listOwnPaymentMethods } from '../../core/billing/customer-sessions/payment-methods.js';
import {
  addOwnPaymentMethod,
  confirmOwnPaymentMethod,
  CustomerPaymentMethodConfirm,
  CustomerPaymentMethodCreate,
  type AddPaymentMethodResult,
} from '../../core/billing/customer-sessions/add-payment-method.js';
import { serializePaymentMethod } from '../../core/billing/payments/serialize.js';
import {
  checkEmailUpdate,
  CustomerEmailUpdateRequest,
  CustomerEmailUpdateVerifyRequest,
  requestEmailUpdate,
  verifyEmailUpdate,
  type EmailUpdateDeps,
} from '../../core/billing/customer-sessions/email-update.js';
import { createMailer, DEFAULT_MAIL_FROM } from '../../core/mail/mailer.js';
import type { CustomerPrincipal } from '../../core/billing/customer-sessions/service.js';
import { CustomerSubscriptionUpdate, updateCustomerSubscription } from '../../core/billing/customer-sessions/subscription-update.js';
import {
  serializeCustomerOrganization,
  serializePortalProduct,
  serializeCustomerGrant,
  serializeCustomerProduct,
  serializePortalCustomer,
} from '../../core/billing/customer-sessions/serialize.js';
import { Text } from '../../core/billing/customers/address.js';
import { customersByIds } from '../../core/billing/customers/repository.js';
import { CustomerPortalUpdate } from '../../core/billing/customers/schema.js';
import { updateCustomer } from '../../core/billing/customers/service.js';
import type { Customer } from '../../core/billing/customers/schema.js';
import { serializeLicenseKey, serializeLicenseKeyWithActivations } from '../../core/billing/license-keys/serialize.js';
import { getLicenseKey, listLicenseKeys, rotateLicenseKey } from '../../core/billing/license-keys/service.js';
import { generateInvoice, invoiceLink, receiptLink } from '../../core/billing/orders/invoice.js';
import { orderPaymentStatus } from '../../core/billing/orders/payment-status.js';
import { OrderUpdate } from '../../core/billing/orders/schema.js';
import { getOrder, listOrders, serializeOrderView, updateOrder, type OrderView } from '../../core/billing/orders/service.js';
import { BENEFIT_TYPES } from '../../core/billing/benefits/schema.js';
import { getCustomerMeter, listCustomerMeters, type CustomerMeterView } from '../../core/metering/customer-meters.js';
import { serializeCustomerMeter } from '../../core/metering/serialize.js';
import { findOrganization } from '../../core/billing/organizations/repository.js';
import type { Organization } from '../../core/billing/organizations/schema.js';
import { getProduct, listProducts } from '../../core/billing/products/service.js';
import type { Product } from '../../core/billing/products/schema.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import { oneOrMany, queryBoolean, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { serializeSubscription } from '../../core/billing/subscriptions/serialize.js';
import { getSubscription, listSubscriptions } from '../../core/billing/subscriptions/service.js';
import type { SubscriptionView } from '../../core/billing/subscriptions/relations.js';
import { CoreError } from '../../core/errors.js';
import type { Database } from '../../core/db/database.js';
import type { V1Deps } from '../http/v1/deps.js';
import { listOAuthAccountNames } from '../../core/billing/oauth-accounts/repository.js';
import type { OAuthAccountName } from '../../core/billing/oauth-accounts/schema.js';
import { defineRoute } from '../http/v1/route.js';
import { downloadKeyOf, serializeDownloadable } from './benefit-grants.js';
import { listMethods } from './payments.js';
import { subscriptionDeps } from './subscriptions.js';

// The customer portal (Polar's /v1/customer-portal/…): a customer session token opens it, and every answer is about
// that session's one customer of one organization. Objects of other customers read as 404, as unknown ones do.

const TAG = 'customer-portal';
const SCOPES = [] as const;
const IdParams = z.object({ id: Text.min(1) });
const Ids = oneOrMany(Text.min(1)).optional();

/** The session's customer and organization (the session was checked live a moment ago, so both exist). */
async function whoAmI(db: Database, customer: CustomerPrincipal): Promise<{ customer: Customer; organization: Organization; accounts: OAuthAccountName[] }> {
  const [found, organization, accounts] = await Promise.all([customersByIds(db, [customer.customerId]), findOrganization(db, customer.organizationId), listOAuthAccountNames(db, customer.customerId)]);
  const me = found.get(customer.customerId);
  if (!me || !organization) throw new CoreError('unauthorized', 'INVALID_CUSTOMER_SESSION', 'The customer session token is invalid or expired');
  return { customer: me, organization, accounts };
}

/** A product as the portal shows it, read once per request. */
function productReader(deps: V1Deps, organization: Organization) {
  const cache = new Map<string, Promise<Product>>();
  const readable = new Set([organization.id]);
  return async (id: string) => {
    if (!cache.has(id)) cache.set(id, getProduct(deps.db, readable, id));
    return serializeCustomerProduct(await cache.get(id)!, organization, deps.baseUrl);
  };
}

const ORDER_FIELDS = [
  'id', 'created_at', 'modified_at', 'status', 'paid', 'subtotal_amount', 'discount_amount', 'net_amount', 'tax_amount', 'total_amount',
  'applied_balance_amount', 'due_amount', 'refunded_amount', 'refunded_tax_amount', 'currency', 'billing_reason', 'billing_name',
  'billing_address', 'invoice_number', 'is_invoice_generated', 'receipt_number', 'seats', 'customer_id', 'product_id', 'discount_id',
  'subscription_id', 'checkout_id', 'next_payment_attempt_at', 'items', 'description', 'refundable_amount', 'refundable_tax_amount',
  // SDK 1.x requires it (null: no unit-based prices).
  'units',
] as const;

const SUBSCRIPTION_FIELDS = [
  'id', 'created_at', 'modified_at', 'amount', 'currency', 'recurring_interval', 'recurring_interval_count', 'status',
  'current_period_start', 'current_period_end', 'current_meter_period_start', 'current_meter_period_end', 'trial_start', 'trial_end',
  'cancel_at_period_end', 'canceled_at', 'started_at', 'ends_at', 'ended_at', 'past_due_at', 'pause_at_period_end', 'paused_at',
  'resumes_at', 'customer_id', 'product_id', 'discount_id', 'checkout_id', 'seats', 'customer_cancellation_reason',
  'customer_cancellation_comment', 'units',
] as const;

function pick<T extends Record<string, unknown>>(source: T, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key) => [key, source[key]]));
}

/** Polar's CustomerOrder: the order without the seller's metadata, fees and custom field answers. */
async function customerOrder(view: OrderView, product: (id: string) => Promise<unknown>) {
  const wire = serializeOrderView(view);
  return {
    ...pick(wire, ORDER_FIELDS),
    product: view.order.productId ? await product(view.order.productId) : null,
    subscription: wire.subscription ? pick(wire.subscription as Record<string, unknown>, SUBSCRIPTION_FIELDS) : null,
  };
}

/** Polar's CustomerSubscription. */
async function customerSubscription(view: SubscriptionView, deps: V1Deps, product: (id: string) => Promise<unknown>) {
  const wire = serializeSubscription(view, deps.baseUrl);
  return { ...pick(wire, SUBSCRIPTION_FIELDS), product: await product(view.subscription.productId), prices: wire.prices, meters: wire.meters, pending_update: null };
}

/** A customer's change to one of their subscriptions, answered as Polar's CustomerSubscription. */
async function changeOwnSubscription(deps: V1Deps, customer: CustomerPrincipal, id: string, update: CustomerSubscriptionUpdate) {
  const { organization } = await whoAmI(deps.db, customer);
  const view = await updateCustomerSubscription(subscriptionDeps(deps), customer, id, update);
  return customerSubscription(view, deps, productReader(deps, organization));
}

/** One of the session customer's orders; another customer's is not found, exactly as an unknown one. */
async function ownOrder(deps: V1Deps, customer: CustomerPrincipal): Promise<(id: string) => Promise<OrderView>> {
  const readable = new Set([customer.organizationId]);
  return async (id) => {
    const view = await getOrder(deps.db, readable, id);
    if (view.order.customerId !== customer.customerId) throw notFound('order');
    return view;
  };
}

/** The session customer's organization, as order services take it: readable and writable, nothing else. */
const orderAccess = (customer: CustomerPrincipal) => ({ read: new Set([customer.organizationId]), write: new Set([customer.organizationId]) });
/** What an email update needs: the mailer (the outbox when the app was built without one) and the secret. */
const emailDeps = async (deps: V1Deps): Promise<EmailUpdateDeps> => ({
  db: deps.db,
  clock: deps.clock,
  mailer: deps.mailer ?? createMailer(deps.db, { from: DEFAULT_MAIL_FROM }),
  secret: await secretOf(deps),
  baseUrl: deps.baseUrl,
});

/** What saving or deleting a card needs: the processors (the organization's decides). */
const addDeps = (deps: V1Deps) => ({ db: deps.db, clock: deps.clock, payments: deps.payments, livePayments: deps.livePayments ?? null, liveRequired: deps.liveRequired ?? false });

/** Polar's CustomerPaymentMethodCreateResponse. */
function paymentMethodAnswer(result: AddPaymentMethodResult) {
  if (result.status === 'requires_action') return { status: 'requires_action', client_secret: result.clientSecret };
  return { status: 'succeeded', payment_method: serializePaymentMethod(result.method, result.isDefault) };
}

const secretOf = async (deps: V1Deps) => (await deps.auth.$context).secret;

/** A filter of Polar's portal list that Till does not apply: refused with a 422 saying so, never silently ignored. */
const unsupported = (why: string) => z.undefined({ error: why }).optional();
const NO_SEARCH = unsupported('Till’s portal does not search by name: filter by id instead.');

/** Polar's CustomerCustomerMeter: the customer's figures on one meter, and the meter's name. */
function customerMeter(view: CustomerMeterView) {
  const wire = serializeCustomerMeter(view.customerMeter, view.customer, view.meter);
  const { customer: _customer, meter, ...rest } = wire;
  return { ...rest, meter: { created_at: meter.created_at, modified_at: meter.modified_at, id: meter.id, name: meter.name } };
}

const notFound = (what: string) => new CoreError('not_found', `${what.toUpperCase().replace(/ /g, '_')}_NOT_FOUND`, `${what[0]!.toUpperCase()}${what.slice(1)} not found`);

export const customerPortalRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/organizations/:slug',
    operationId: 'customer_portal:organizations:get',
    summary: 'A portal’s organization by slug, with its public products (no credentials: the portal’s sign-in page reads it)',
    tag: TAG,
    scopes: SCOPES,
    public: true,
    params: z.object({ slug: Text.min(1) }),
    handler: async ({ params, deps }) => {
      const row = await deps.db('organization').where({ slug: params.slug }).first('id');
      const organization = row ? await findOrganization(deps.db, String(row.id)) : undefined;
      if (!organization) throw new CoreError('not_found', 'ORGANIZATION_NOT_FOUND', 'Organization not found');
      const filter = { organizationIds: [organization.id], isArchived: false, visibilities: ['public' as const], metadata: {} };
      const products = await listProducts(deps.db, filter, toSortCriteria(['created_at']), { page: 1, limit: 100 });
      return {
        organization: serializeCustomerOrganization(organization),
        products: products.items.map((product) => serializePortalProduct(product, organization, deps.baseUrl)),
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/customer-session/introspect',
    operationId: 'customer_portal:customer_session:introspect',
    summary: 'The customer session this request carries: when it expires and where the portal returns to',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    handler: async ({ customer }) => ({ expires_at: customer.expiresAt.toISOString(), return_url: customer.returnUrl }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/customer-session/user',
    operationId: 'customer_portal:customer_session:get_authenticated_user',
    summary: 'Who the customer session speaks for',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    handler: async ({ customer, deps }) => {
      const me = (await whoAmI(deps.db, customer)).customer;
      return { type: 'customer', name: me.name, email: me.email, customer_id: me.id, member_id: null, role: null };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/customers/me',
    operationId: 'customer_portal:customers:get',
    summary: 'The signed-in customer',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    handler: async ({ customer, deps }) => {
      const { customer: me, accounts } = await whoAmI(deps.db, customer);
      return serializePortalCustomer(me, accounts);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/customer-portal/customers/me',
    operationId: 'customer_portal:customers:update',
    summary: 'The signed-in customer changes their billing name, billing address or tax ID (emits customer.updated)',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    body: CustomerPortalUpdate,
    handler: async ({ customer, body, deps }) => {
      // The seller's own update, reaching this one customer only: the same checks (tax ID against the country) and events.
      const organizations = new Set([customer.organizationId]);
      const me = await updateCustomer(deps.db, deps.clock, { readable: organizations, writable: organizations }, { id: customer.customerId }, body);
      return serializePortalCustomer(me, await listOAuthAccountNames(deps.db, customer.customerId));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/customer-portal/customers/me/email-update/request',
    operationId: 'customer_portal:customers:request_email_update',
    summary: 'Mail a single-use link to a new address; following it makes that the customer’s email (403 unless the organization allows email changes)',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    status: 202,
    response: null,
    body: CustomerEmailUpdateRequest,
    handler: async ({ customer, body, deps }) => {
      await requestEmailUpdate(await emailDeps(deps), customer, body.email);
      return null;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/customers/me/email-update/check',
    operationId: 'customer_portal:customers:check_email_update',
    summary: 'Whether an email update link is still valid (no credentials: the token is the proof); 401 when not',
    tag: TAG,
    scopes: SCOPES,
    public: true,
    status: 204,
    response: null,
    query: z.object({ token: Text.min(1).max(200) }),
    handler: async ({ query, deps }) => {
      await checkEmailUpdate(await emailDeps(deps), query.token);
      return null;
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/customer-portal/customers/me/email-update/verify',
    operationId: 'customer_portal:customers:verify_email_update',
    summary: 'Make the change an email update link names (once; no credentials), answering a new customer session token',
    tag: TAG,
    scopes: SCOPES,
    public: true,
    body: CustomerEmailUpdateVerifyRequest,
    handler: async ({ body, deps }) => ({ token: (await verifyEmailUpdate(await emailDeps(deps), body.token)).token }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/customers/me/payment-methods',
    operationId: 'customer_portal:customers:list_payment_methods',
    summary: 'The customer’s saved payment methods (brand, last four, expiry), the default (newest) first',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    query: PageQuery,
    handler: async ({ customer, query, deps }) => listMethods(await listOwnPaymentMethods(deps.db, customer, query), query),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/customer-portal/customers/me/payment-methods',
    operationId: 'customer_portal:customers:add_payment_method',
    summary: 'Save a card through the processor’s setup flow (Stripe SetupIntent): succeeded with the method, or requires_action (3-D Secure) with its client_secret',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    status: 201,
    body: CustomerPaymentMethodCreate,
    handler: async ({ customer, body, deps }) =>
      paymentMethodAnswer(
        await addOwnPaymentMethod(addDeps(deps), customer, {
          method: { kind: 'token', token: body.confirmation_token_id },
          setDefault: body.set_default,
          returnUrl: body.return_url,
          // A new setup per request: Stripe spends a ConfirmationToken once, and the sandbox's test tokens are reusable names.
          idempotencyKey: randomUUID(),
        }),
      ),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/customer-portal/customers/me/payment-methods/confirm',
    operationId: 'customer_portal:customers:confirm_payment_method',
    summary: 'Save the card of a setup the customer authenticated (3-D Secure)',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    status: 201,
    body: CustomerPaymentMethodConfirm,
    handler: async ({ customer, body, deps }) => paymentMethodAnswer(await confirmOwnPaymentMethod(addDeps(deps), customer, { setupId: body.setup_intent_id, setDefault: body.set_default })),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/customer-portal/customers/me/payment-methods/:id',
    operationId: 'customer_portal:customers:delete_payment_method',
    summary: 'Delete one of the customer’s saved payment methods, unless it is the last one while a subscription is billed (400)',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    status: 204,
    response: null,
    params: IdParams,
    handler: async ({ customer, params, deps }) => {
      await deleteOwnPaymentMethod(addDeps(deps), customer, params.id);
      return null;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/orders',
    operationId: 'customer_portal:orders:list',
    summary: 'The customer’s orders',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    query: PageQuery.extend({
      product_id: Ids,
      product_billing_type: oneOrMany(z.enum(['one_time', 'recurring'])).optional(),
      subscription_id: Ids,
      query: NO_SEARCH,
      sorting: sortingQuery(['created_at', 'amount', 'net_amount', 'product', 'subscription'] as const).default(['-created_at']),
    }),
    handler: async ({ customer, query, deps }) => {
      const { organization } = await whoAmI(deps.db, customer);
      const filter = {
        organizationIds: [customer.organizationId],
        customerIds: [customer.customerId],
        productIds: query.product_id,
        productPriceTypes: query.product_billing_type,
        subscriptionIds: query.subscription_id,
      };
      const page = await listOrders(deps.db, filter, toSortCriteria(query.sorting), query);
      const product = productReader(deps, organization);
      const items = await Promise.all(page.items.map((view) => customerOrder(view, product)));
      return listResource({ items, totalCount: page.totalCount }, query, (item) => item);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/orders/:id',
    operationId: 'customer_portal:orders:get',
    summary: 'One of the customer’s orders',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    handler: async ({ customer, params, deps }) => {
      const { organization } = await whoAmI(deps.db, customer);
      const view = await getOrder(deps.db, new Set([customer.organizationId]), params.id);
      if (view.order.customerId !== customer.customerId) throw notFound('order');
      return customerOrder(view, productReader(deps, organization));
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/customer-portal/orders/:id',
    operationId: 'customer_portal:orders:update',
    summary: 'Change the billing name and address one of the customer’s orders shows on its invoice (emits order.updated)',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    body: OrderUpdate,
    handler: async ({ customer, params, body, deps }) => {
      const { organization } = await whoAmI(deps.db, customer);
      await (await ownOrder(deps, customer))(params.id);
      // The seller's own update: the same checks (none once the invoice exists) and the same order.updated.
      const view = await updateOrder(deps.db, deps.clock, orderAccess(customer), params.id, body);
      return customerOrder(view, productReader(deps, organization));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/customer-portal/orders/:id/invoice',
    operationId: 'customer_portal:orders:generate_invoice',
    summary: 'Generate the invoice of one of the customer’s paid orders (needs its billing name and address; emits order.updated)',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    status: 202,
    response: null,
    params: IdParams,
    handler: async ({ customer, params, deps }) => {
      await (await ownOrder(deps, customer))(params.id);
      await generateInvoice(deps.db, deps.clock, orderAccess(customer), params.id);
      return null;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/orders/:id/invoice',
    operationId: 'customer_portal:orders:invoice',
    summary: 'A link to the invoice PDF of one of the customer’s orders, valid one hour (generated on first ask)',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    handler: async ({ customer, params, deps }) => {
      await (await ownOrder(deps, customer))(params.id);
      return invoiceLink(deps.db, deps.clock, orderAccess(customer), params.id, { baseUrl: deps.baseUrl, secret: await secretOf(deps), now: deps.clock.now() });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/orders/:id/receipt',
    operationId: 'customer_portal:orders:receipt',
    summary: 'A link to the receipt PDF of one of the customer’s paid orders, valid one hour; 404 ReceiptNotAllocated while it is not paid',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    handler: async ({ customer, params, deps }) => {
      await (await ownOrder(deps, customer))(params.id);
      return receiptLink(deps.db, orderAccess(customer), params.id, { baseUrl: deps.baseUrl, secret: await secretOf(deps), now: deps.clock.now() });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/orders/:id/payment-status',
    operationId: 'customer_portal:orders:get_payment_status',
    summary: 'How the payment of one of the customer’s orders stands (its latest attempt), with the decline message when it failed',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    handler: async ({ customer, params, deps }) => orderPaymentStatus(deps.db, (await (await ownOrder(deps, customer))(params.id)).order),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/subscriptions',
    operationId: 'customer_portal:subscriptions:list',
    summary: 'The customer’s subscriptions',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    query: PageQuery.extend({
      product_id: Ids,
      active: queryBoolean.optional(),
      query: NO_SEARCH,
      sorting: sortingQuery(['started_at', 'amount', 'status', 'product', 'organization'] as const).default(['-started_at']),
    }),
    handler: async ({ customer, query, deps }) => {
      const { organization } = await whoAmI(deps.db, customer);
      const filter = { organizationIds: [customer.organizationId], customerIds: [customer.customerId], productIds: query.product_id, active: query.active, metadata: {} };
      // Every subscription here is of one organization: sorting by it orders nothing.
      const sorting = toSortCriteria(query.sorting.filter((criterion) => criterion.replace(/^-/, '') !== 'organization'));
      const page = await listSubscriptions(deps.db, filter, sorting, query);
      const product = productReader(deps, organization);
      const items = await Promise.all(page.items.map((view) => customerSubscription(view, deps, product)));
      return listResource({ items, totalCount: page.totalCount }, query, (item) => item);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/subscriptions/:id',
    operationId: 'customer_portal:subscriptions:get',
    summary: 'One of the customer’s subscriptions',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    handler: async ({ customer, params, deps }) => {
      const { organization } = await whoAmI(deps.db, customer);
      const view = await getSubscription(deps.db, new Set([customer.organizationId]), params.id);
      if (view.subscription.customerId !== customer.customerId) throw notFound('subscription');
      return customerSubscription(view, deps, productReader(deps, organization));
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/customer-portal/subscriptions/:id',
    operationId: 'customer_portal:subscriptions:update',
    summary: 'Change the plan of one of the customer’s subscriptions (prorated as the organization says), or cancel it at the period’s end with a reason and comment, or uncancel it',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    body: CustomerSubscriptionUpdate,
    handler: async ({ customer, params, body, deps }) => changeOwnSubscription(deps, customer, params.id, body),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/customer-portal/subscriptions/:id',
    operationId: 'customer_portal:subscriptions:cancel',
    summary: 'Cancel one of the customer’s subscriptions at the period’s end (it stays active until then)',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    handler: async ({ customer, params, deps }) => changeOwnSubscription(deps, customer, params.id, { kind: 'cancel', cancel_at_period_end: true }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/benefit-grants',
    operationId: 'customer_portal:benefit_grants:list',
    summary: 'The benefits granted to the customer',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    query: PageQuery.extend({
      benefit_id: Ids,
      // The SDK's typeFilter, sent as `type`.
      type: oneOrMany(z.enum(BENEFIT_TYPES)).optional(),
      order_id: Ids,
      subscription_id: Ids,
      query: NO_SEARCH,
      checkout_id: unsupported('Till does not link a grant to its checkout: filter by order_id instead.'),
      member_id: unsupported('Till’s customers have no members.'),
      // product_benefit (the benefits' order on their product) is in Polar's default, which SDK 1.x sends.
      sorting: sortingQuery(['granted_at', 'type', 'organization', 'product_benefit'] as const).default(['-granted_at']),
    }),
    handler: async ({ customer, query, deps }) => {
      const { customer: me, organization, accounts } = await whoAmI(deps.db, customer);
      const filter = {
        organizationIds: [customer.organizationId],
        customerIds: [customer.customerId],
        benefitIds: query.benefit_id,
        benefitTypes: query.type,
        orderIds: query.order_id,
        subscriptionIds: query.subscription_id,
      };
      const page = await listGrants(deps.db, filter, toSortCriteria(query.sorting), query);
      const benefits = new Map<string, Benefit | undefined>();
      const items = [];
      for (const grant of page.items) {
        if (!benefits.has(grant.benefitId)) benefits.set(grant.benefitId, await findBenefit(deps.db, grant.benefitId, [customer.organizationId]));
        const benefit = benefits.get(grant.benefitId);
        if (benefit) items.push(serializeCustomerGrant(grant, me, accounts, benefit, organization));
      }
      return listResource({ items, totalCount: page.totalCount }, query, (item) => item);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/benefit-grants/:id',
    operationId: 'customer_portal:benefit_grants:get',
    summary: 'One benefit granted to the customer',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    handler: async ({ customer, params, deps }) => {
      const { customer: me, organization, accounts } = await whoAmI(deps.db, customer);
      const grant = await findGrant(deps.db, params.id, [customer.organizationId]);
      const benefit = grant && grant.customerId === customer.customerId ? await findBenefit(deps.db, grant.benefitId, [customer.organizationId]) : undefined;
      if (!grant || !benefit) throw notFound('benefit grant');
      return serializeCustomerGrant(grant, me, accounts, benefit, organization);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/license-keys',
    operationId: 'customer_portal:license_keys:list',
    summary: 'The customer’s license keys, with their activations',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    query: PageQuery.extend({ benefit_id: Ids }),
    handler: async ({ customer, query, apiVersion, deps }) => {
      const filter = { organizationIds: [customer.organizationId], customerIds: [customer.customerId], benefitIds: query.benefit_id };
      const page = await listLicenseKeys(deps.db, filter, query);
      const readable = new Set([customer.organizationId]);
      const items = await Promise.all(page.items.map(async ({ key }) => {
        const full = await getLicenseKey(deps.db, readable, key.id);
        return serializeLicenseKeyWithActivations(full.key, full.customer, full.activations, apiVersion);
      }));
      return listResource({ items, totalCount: page.totalCount }, query, (item) => item);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/license-keys/:id',
    operationId: 'customer_portal:license_keys:get',
    summary: 'One of the customer’s license keys, with its activations',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    handler: async ({ customer, params, apiVersion, deps }) => {
      const full = await getLicenseKey(deps.db, new Set([customer.organizationId]), params.id);
      if (full.key.customerId !== customer.customerId) throw notFound('license key');
      return serializeLicenseKeyWithActivations(full.key, full.customer, full.activations, apiVersion);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/customer-portal/license-keys/:id/rotate',
    operationId: 'customer_portal:license_keys:rotate',
    summary: 'Rotate one of the customer’s license keys: a new key replaces it; a revoked key is 400 RotateNotPermitted',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    response: { component: 'LicenseKeyRead' },
    handler: async ({ customer, params, apiVersion, deps }) => {
      const { key, customer: owner } = await rotateLicenseKey(deps.db, deps.clock, new Set([customer.organizationId]), params.id, { customerId: customer.customerId });
      return serializeLicenseKey(key, owner, apiVersion);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/downloadables',
    operationId: 'customer_portal:downloadables:list',
    summary: 'The files the customer’s downloadables benefits give, with signed links (valid one hour)',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    query: PageQuery.extend({ benefit_id: Ids }),
    handler: async ({ customer, query, deps }) => {
      const readable = new Set([customer.organizationId]);
      const filter = { organizationIds: [customer.organizationId], customerIds: [customer.customerId], benefitIds: query.benefit_id, isGranted: true };
      // A customer holds a handful of grants: they are read whole, then the files are paged.
      const grants = await listGrants(deps.db, filter, toSortCriteria(['-granted_at']), { page: 1, limit: 1000 });
      const link = { key: await downloadKeyOf(deps), baseUrl: deps.baseUrl };
      const all = [];
      for (const grant of grants.items) {
        const benefit = await findBenefit(deps.db, grant.benefitId, readable);
        if (benefit?.type !== 'downloadables') continue;
        for (const downloadable of await grantDownloads(deps.db, deps.clock, readable, grant.id, link)) all.push(serializeDownloadable(downloadable, deps.baseUrl));
      }
      const start = (query.page - 1) * query.limit;
      return listResource({ items: all.slice(start, start + query.limit), totalCount: all.length }, query, (item) => item);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/meters',
    operationId: 'customer_portal:customer_meters:list',
    summary: 'The customer’s usage on each meter: consumed and credited units, and the balance',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    query: PageQuery.extend({
      meter_id: Ids,
      query: NO_SEARCH,
      sorting: sortingQuery(['created_at', 'modified_at', 'meter_id', 'meter_name', 'consumed_units', 'credited_units', 'balance'] as const).default(['-modified_at']),
    }),
    handler: async ({ customer, query, deps }) => {
      const filter = { organizationIds: [customer.organizationId], customerIds: [customer.customerId], meterIds: query.meter_id };
      return listResource(await listCustomerMeters(deps.db, filter, toSortCriteria(query.sorting), query), query, customerMeter);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/customer-portal/meters/:id',
    operationId: 'customer_portal:customer_meters:get',
    summary: 'The customer’s usage on one meter',
    tag: TAG,
    scopes: SCOPES,
    portal: true,
    params: IdParams,
    handler: async ({ customer, params, deps }) => {
      const view = await getCustomerMeter(deps.db, new Set([customer.organizationId]), params.id);
      if (view.customerMeter.customerId !== customer.customerId) throw notFound('customer meter');
      return customerMeter(view);
    },
  }),
];
