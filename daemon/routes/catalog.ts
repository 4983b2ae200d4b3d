import { z } from 'zod';
import { bindCatalogKey, catalogKeys, serializeBinding } from '../../core/catalog/service.js';
import { CATALOG_KINDS, CatalogKeyBind } from '../../core/catalog/schema.js';
import type { Scope } from '../../core/billing/shared/scopes.js';
import { catalogJsonSchema } from '../../cli/catalog/schema.js';
import { defineRoute, organizationsWith, requireScope, targetOrganization } from '../http/v1/route.js';
import { findOrganization } from '../../core/billing/organizations/repository.js';
import { PRORATION_BEHAVIORS } from '../../core/billing/subscriptions/schema.js';
import { serializeSubscription } from '../../core/billing/subscriptions/serialize.js';
import { getSubscription } from '../../core/billing/subscriptions/service.js';
import { migrateSubscriptionPrice } from '../../core/billing/subscriptions/change-product.js';
import { access, subscriptionDeps } from './subscriptions.js';

const READ = [...new Set(Object.values(CATALOG_KINDS).flatMap((kind): Scope[] => [kind.read, kind.write]))];
const WRITE = [...new Set(Object.values(CATALOG_KINDS).map((kind): Scope => kind.write))];

/** A key of the catalog file and the object it names (serializeBinding writes it). */
const CatalogKeyAnswer = z.object({
  organization_id: z.string(),
  kind: z.enum(Object.keys(CATALOG_KINDS) as [keyof typeof CATALOG_KINDS, ...(keyof typeof CATALOG_KINDS)[]]),
  key: z.string(),
  object_id: z.string(),
  created_at: z.iso.datetime({ offset: true }),
});
const CatalogSchemaAnswer = z
  .looseObject({ $schema: z.string(), $id: z.string(), title: z.string(), type: z.literal('object') })
  .describe('A JSON Schema (draft 2020-12) of catalog files: give it to an editor for completion and checks');

/** The catalog file's keys (`till plan`, `till apply`, `till pull`; docs/catalog-as-code.md), and its JSON Schema. */
export const catalogRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/catalog/schema.json',
    operationId: 'catalog:schema',
    summary: 'The JSON Schema of catalog files (Till extension)',
    tag: 'catalog',
    scopes: [],
    public: true,
    response: CatalogSchemaAnswer,
    handler: async () => catalogJsonSchema(),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/catalog/keys',
    operationId: 'catalog:keys:list',
    summary: 'The keys the organization’s catalog file gave its objects (Till extension)',
    tag: 'catalog',
    scopes: READ,
    query: z.object({ organization_id: z.string().min(1).optional() }),
    response: z.object({ items: z.array(CatalogKeyAnswer) }),
    handler: async ({ principal, query, deps }) => {
      // Like every list: the organization named, else every one the caller reads.
      const organizationIds = query.organization_id ? [targetOrganization(principal, query.organization_id, READ)] : [...organizationsWith(principal, READ)];
      const items = [];
      for (const organizationId of organizationIds) items.push(...(await catalogKeys(deps.db, organizationId)).map(serializeBinding));
      return { items };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/catalog/keys',
    operationId: 'catalog:keys:bind',
    summary: 'Name an object by a catalog key (Till extension)',
    tag: 'catalog',
    scopes: WRITE,
    body: CatalogKeyBind,
    response: CatalogKeyAnswer,
    handler: async ({ principal, body, deps }) => {
      const organizationId = targetOrganization(principal, body.organization_id, WRITE);
      requireScope(principal, [CATALOG_KINDS[body.kind].write], organizationId);
      return serializeBinding(await bindCatalogKey(deps.db, deps.clock, organizationId, body));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/catalog/price-migrations',
    operationId: 'catalog:price-migrations:create',
    summary: 'Move a subscription onto another price of its product (Till extension; `till apply` with migrate_subscriptions)',
    tag: 'catalog',
    scopes: ['subscriptions:write'],
    body: z.strictObject({
      subscription_id: z.string().min(1),
      price_id: z.string().min(1),
      proration_behavior: z.enum(PRORATION_BEHAVIORS).nullish(),
    }),
    response: { component: 'Subscription' },
    handler: async ({ principal, body, deps }) => {
      const subscription = await getSubscription(deps.db, organizationsWith(principal, ['subscriptions:read', 'subscriptions:write']), body.subscription_id);
      const organization = await findOrganization(deps.db, subscription.subscription.organizationId);
      const behavior = body.proration_behavior ?? organization?.settings.subscription_settings.proration_behavior ?? 'prorate';
      return serializeSubscription(await migrateSubscriptionPrice(subscriptionDeps(deps), access(principal), body.subscription_id, body.price_id, behavior), deps.baseUrl);
    },
  }),
];
