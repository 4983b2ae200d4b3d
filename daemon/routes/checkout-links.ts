import { Router, type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { openCheckoutLink } from '../../core/billing/checkout-links/open.js';
import { CHECKOUT_LINK_SORTING, CheckoutLinkCreate, CheckoutLinkUpdate } from '../../core/billing/checkout-links/schema.js';
import { serializeCheckoutLink } from '../../core/billing/checkout-links/serialize.js';
import { createCheckoutLink, deleteCheckoutLink, getCheckoutLink, listCheckoutLinks, updateCheckoutLink } from '../../core/billing/checkout-links/service.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import type { V1Deps } from '../http/v1/deps.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['checkout_links:read', 'checkout_links:write'] as const;
const WRITE = ['checkout_links:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });

const access = (principal: Principal) => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });

export const checkoutLinkRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/checkout-links',
    operationId: 'checkout-links:list',
    summary: 'List checkout links',
    tag: 'checkout-links',
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      product_id: oneOrMany(z.string()).optional(),
      sorting: sortingQuery(CHECKOUT_LINK_SORTING).default(['created_at']),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const page = await listCheckoutLinks(deps.db, { organizationIds, productIds: query.product_id }, toSortCriteria(query.sorting), query);
      return listResource(page, query, (link) => serializeCheckoutLink(link, deps.baseUrl));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/checkout-links',
    operationId: 'checkout-links:create',
    summary: 'Create a checkout link: a shareable URL that opens a fresh checkout for its products each time',
    tag: 'checkout-links',
    scopes: WRITE,
    status: 201,
    body: CheckoutLinkCreate,
    handler: async ({ principal, body, deps }) => serializeCheckoutLink(await createCheckoutLink(deps.db, deps.clock, access(principal), body), deps.baseUrl),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/checkout-links/:id',
    operationId: 'checkout-links:get',
    summary: 'Get a checkout link',
    tag: 'checkout-links',
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeCheckoutLink(await getCheckoutLink(deps.db, organizationsWith(principal, READ), params.id), deps.baseUrl),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/checkout-links/:id',
    operationId: 'checkout-links:update',
    summary: 'Update a checkout link (products given replace the list)',
    tag: 'checkout-links',
    scopes: WRITE,
    params: IdParams,
    body: CheckoutLinkUpdate,
    handler: async ({ principal, params, body, deps }) => serializeCheckoutLink(await updateCheckoutLink(deps.db, deps.clock, access(principal), params.id, body), deps.baseUrl),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/checkout-links/:id',
    operationId: 'checkout-links:delete',
    summary: 'Delete a checkout link (its URL stops opening checkouts)',
    tag: 'checkout-links',
    scopes: WRITE,
    status: 204,
    params: IdParams,
    handler: async ({ principal, params, deps }) => {
      await deleteCheckoutLink(deps.db, deps.clock, access(principal), params.id);
    },
  }),
];

/**
 * A link's public URL, `GET /v1/checkout-links/{client_secret}/redirect`: a customer's browser, no credentials.
 * It opens a checkout and redirects to its hosted page (307, as Polar's RedirectResponse); not in the OpenAPI
 * document, as in Polar's.
 */
export function checkoutLinkRedirectRouter(deps: V1Deps): Router {
  const router = Router();
  router.get('/v1/checkout-links/:client_secret/redirect', async (req: Request<{ client_secret: string }>, res: Response, next: NextFunction) => {
    try {
      const ip = req.ip?.replace(/^::ffff:/, '') ?? null;
      const checkoutDeps = { db: deps.db, clock: deps.clock, payments: deps.payments, livePayments: deps.livePayments, liveRequired: deps.liveRequired, baseUrl: deps.baseUrl };
      const opened = await openCheckoutLink(checkoutDeps, req.params.client_secret, req.query as Record<string, unknown>, ip && z.union([z.ipv4(), z.ipv6()]).safeParse(ip).success ? ip : null);
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(307, opened.location);
    } catch (error) {
      next(error);
    }
  });
  return router;
}
