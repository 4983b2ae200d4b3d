import express, { Router } from 'express';
import { accessTokenRoutes } from '../../routes/access-tokens.js';
import { organizationRoutes } from '../../routes/organizations.js';
import { discountRoutes } from '../../routes/discounts.js';
import { customFieldRoutes } from '../../routes/custom-fields.js';
import { customerRoutes } from '../../routes/customers.js';
import { fileRoutes, fileTransferRouter } from '../../routes/files.js';
import { benefitRoutes } from '../../routes/benefits.js';
import { productRoutes } from '../../routes/products.js';
import { clockRoutes } from '../../routes/clock.js';
import { paymentModeRoutes } from '../../routes/payment-mode.js';
import { listenRouter } from '../../routes/listen.js';
import { webhookRoutes } from '../../routes/webhooks.js';
import { eventRoutes, INGEST_BODY_LIMIT, INGEST_PATH } from '../../routes/events.js';
import { eventTypeRoutes } from '../../routes/event-types.js';
import { meterRoutes } from '../../routes/meters.js';
import { customerMeterRoutes } from '../../routes/customer-meters.js';
import { invoiceRouter, orderRoutes } from '../../routes/orders.js';
import { refundRoutes } from '../../routes/refunds.js';
import { paymentRoutes } from '../../routes/payments.js';
import { subscriptionRoutes } from '../../routes/subscriptions.js';
import { benefitGrantRoutes, downloadRouter } from '../../routes/benefit-grants.js';
import { licenseKeyRoutes } from '../../routes/license-keys.js';
import { customerStateRoutes } from '../../routes/customer-state.js';
import { checkoutRoutes } from '../../routes/checkouts.js';
import { checkoutLinkRedirectRouter, checkoutLinkRoutes } from '../../routes/checkout-links.js';
import { taxRateRoutes } from '../../routes/tax-rates.js';
import { metricRoutes } from '../../routes/metrics.js';
import { disputeRoutes } from '../../routes/disputes.js';
import { stripeWebhookRouter } from '../../routes/stripe-webhook.js';
import { catalogRoutes } from '../../routes/catalog.js';
import { customerSessionRoutes } from '../../routes/customer-sessions.js';
import { customerPortalRoutes } from '../../routes/customer-portal.js';
import { customerPortalGrantRoutes } from '../../routes/customer-portal-grants.js';
import type { V1Deps } from './deps.js';
import { openApiDocument, type OpenApiDocument } from './openapi.js';
import { mountRoutes, type AnyRoute } from './route.js';
import { apiVersion } from './api-version.js';
import { sendApiDocs } from '../../pages/views/ApiDocsPage.js';

/** Every /v1 operation, in the order the OpenAPI document lists them. */
export const V1_ROUTES: readonly AnyRoute[] = [...organizationRoutes, ...accessTokenRoutes, ...discountRoutes, ...customFieldRoutes, ...customerStateRoutes, ...customerRoutes, ...customerSessionRoutes, ...fileRoutes, ...benefitRoutes, ...productRoutes, ...checkoutRoutes, ...checkoutLinkRoutes, ...taxRateRoutes, ...clockRoutes, ...paymentModeRoutes, ...webhookRoutes, ...eventRoutes, ...eventTypeRoutes, ...meterRoutes, ...customerMeterRoutes, ...orderRoutes, ...refundRoutes, ...paymentRoutes, ...benefitGrantRoutes, ...licenseKeyRoutes, ...subscriptionRoutes, ...metricRoutes, ...disputeRoutes, ...catalogRoutes];

/**
 * The customer portal's operations (`/v1/customer-portal/…`): a customer session token opens them, never a seller's
 * credentials. Kept apart from V1_ROUTES, whose walks (scopes, tenancy) are about seller credentials.
 */
export const PORTAL_ROUTES: readonly AnyRoute[] = [...customerPortalRoutes, ...customerPortalGrantRoutes];

const documents = new Map<string, OpenApiDocument>();

/**
 * The OpenAPI document of every /v1 operation, made when first asked for and kept: converting the routes' schemas
 * takes about 80 ms, which every start of tilld (and every daemon a test starts) would otherwise pay for a document
 * few of them serve.
 */
function apiDocument(baseUrl: string): OpenApiDocument {
  let document = documents.get(baseUrl);
  if (!document) {
    document = openApiDocument([...V1_ROUTES, ...PORTAL_ROUTES], baseUrl);
    documents.set(baseUrl, document);
  }
  return document;
}

/** The billing API at /v1, plus /openapi.json and /docs describing it. */
export function v1Router(deps: V1Deps & { baseUrl: string; bodyLimit: number }): Router {
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.json(apiDocument(deps.baseUrl));
  });
  router.get('/docs', (_req, res) => sendApiDocs(res, apiDocument(deps.baseUrl)));
  // Every /v1 answer is written in the Polar-Version asked for; an unknown version is refused before anything else.
  router.use('/v1', apiVersion);
  // Stripe signs the exact bytes it sends: its webhook endpoint reads the raw body, before the JSON parser.
  router.use(stripeWebhookRouter(deps));
  // File part uploads carry raw bytes: mounted before the JSON parser.
  router.use(fileTransferRouter(deps));
  router.use(downloadRouter(deps));
  // The live event stream answers server-sent events, not JSON: it has its own router.
  router.use(listenRouter(deps));
  // Event ingestion takes batches up to 10 MiB (Polar's limit); every other /v1 body keeps the general limit.
  router.use(INGEST_PATH, express.json({ limit: INGEST_BODY_LIMIT }));
  // An order's invoice PDF is bytes behind a signed link: its own router.
  router.use(invoiceRouter(deps));
  // A checkout link's public URL answers a redirect, not JSON.
  router.use(checkoutLinkRedirectRouter(deps));
  router.use('/v1', express.json({ limit: deps.bodyLimit }));
  mountRoutes(router, V1_ROUTES, deps);
  mountRoutes(router, PORTAL_ROUTES, deps);
  return router;
}
