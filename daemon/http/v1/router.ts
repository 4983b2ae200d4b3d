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
import type { V1Deps } from './deps.js';
import { openApiDocument } from './openapi.js';
import { mountRoutes, type AnyRoute } from './route.js';
import { sendApiDocs } from '../../pages/views/ApiDocsPage.js';

/** Every /v1 operation, in the order the OpenAPI document lists them. */
export const V1_ROUTES: readonly AnyRoute[] = [...organizationRoutes, ...accessTokenRoutes, ...discountRoutes, ...customFieldRoutes, ...customerRoutes, ...fileRoutes, ...benefitRoutes, ...productRoutes, ...clockRoutes];

/** The billing API at /v1, plus /openapi.json and /docs describing it. */
export function v1Router(deps: V1Deps & { baseUrl: string; bodyLimit: number }): Router {
  const router = Router();
  const document = openApiDocument(V1_ROUTES, deps.baseUrl);
  router.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  router.get('/docs', (_req, res) => sendApiDocs(res, document));
  // File part uploads carry raw bytes: mounted before the JSON parser.
  router.use(fileTransferRouter(deps));
  router.use('/v1', express.json({ limit: deps.bodyLimit }));
  mountRoutes(router, V1_ROUTES, deps);
  return router;
}
