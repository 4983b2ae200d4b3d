import { z } from 'zod';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, queryBoolean } from '../../core/billing/shared/query.js';
import { Timestamp } from '../../core/billing/shared/time.js';
import { WEBHOOK_EVENT_TYPES } from '../../core/webhooks/outbox.js';
import { WebhookEndpointCreate, WebhookEndpointUpdate } from '../../core/webhooks/schema.js';
import { serializeDelivery, serializeEndpoint } from '../../core/webhooks/serialize.js';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  redeliverEvent,
  resetEndpointSecret,
  updateEndpoint,
} from '../../core/webhooks/service.js';
import type { WebhookEndpoint } from '../../core/webhooks/schema.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';
import type { V1Deps } from '../http/v1/deps.js';

const READ = ['webhooks:read', 'webhooks:write'] as const;
const WRITE = ['webhooks:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });

const access = (principal: Principal) => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });
const policy = (deps: V1Deps) => ({ allowPrivate: deps.webhooksAllowPrivate ?? false });

/** The endpoint as this caller may see it: the secret only where it may change the endpoint. */
const present = (principal: Principal) => {
  const writable = organizationsWith(principal, WRITE);
  return (endpoint: WebhookEndpoint) => serializeEndpoint(endpoint, { showSecret: writable.has(endpoint.organizationId) });
};

export const webhookRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/endpoints',
    operationId: 'webhooks:list_webhook_endpoints',
    summary: 'List webhook endpoints (the secret shows only to those who may change the endpoint)',
    tag: 'webhooks',
    scopes: READ,
    query: PageQuery.extend({ organization_id: oneOrMany(z.string()).optional() }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      return listResource(await listEndpoints(deps.db, organizationIds, query), query, present(principal));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhooks/endpoints',
    operationId: 'webhooks:create_webhook_endpoint',
    summary: 'Create a webhook endpoint (secret generated unless given; format raw, discord or slack)',
    tag: 'webhooks',
    scopes: WRITE,
    status: 201,
    body: WebhookEndpointCreate,
    handler: async ({ principal, body, deps }) => {
      const organizationId = targetOrganization(principal, body.organization_id, WRITE);
      return present(principal)(await createEndpoint(deps.db, deps.clock, organizationId, body, policy(deps)));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/endpoints/:id',
    operationId: 'webhooks:get_webhook_endpoint',
    summary: 'Get a webhook endpoint',
    tag: 'webhooks',
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => present(principal)(await getEndpoint(deps.db, organizationsWith(principal, READ), params.id)),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/webhooks/endpoints/:id',
    operationId: 'webhooks:update_webhook_endpoint',
    summary: 'Update a webhook endpoint (enabling a disabled one clears its failures)',
    tag: 'webhooks',
    scopes: WRITE,
    params: IdParams,
    body: WebhookEndpointUpdate,
    handler: async ({ principal, params, body, deps }) => present(principal)(await updateEndpoint(deps.db, deps.clock, access(principal), params.id, body, policy(deps))),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/webhooks/endpoints/:id/secret',
    operationId: 'webhooks:reset_webhook_endpoint_secret',
    summary: "Replace a webhook endpoint's signing secret with a new one",
    tag: 'webhooks',
    scopes: WRITE,
    params: IdParams,
    handler: async ({ principal, params, deps }) => present(principal)(await resetEndpointSecret(deps.db, deps.clock, access(principal), params.id)),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/webhooks/endpoints/:id',
    operationId: 'webhooks:delete_webhook_endpoint',
    summary: 'Delete a webhook endpoint (pending events are marked skipped)',
    tag: 'webhooks',
    scopes: WRITE,
    status: 204,
    params: IdParams,
    handler: async ({ principal, params, deps }) => {
      await deleteEndpoint(deps.db, deps.clock, access(principal), params.id);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/deliveries',
    operationId: 'webhooks:list_webhook_deliveries',
    summary: 'List delivery attempts, newest first, each with its event',
    tag: 'webhooks',
    scopes: READ,
    query: PageQuery.extend({
      endpoint_id: oneOrMany(z.string()).optional(),
      start_timestamp: Timestamp.optional(),
      end_timestamp: Timestamp.optional(),
      succeeded: queryBoolean.optional(),
      query: z.string().max(1000).optional(),
      http_code_class: z.enum(['2xx', '3xx', '4xx', '5xx']).optional(),
      event_type: oneOrMany(z.enum(WEBHOOK_EVENT_TYPES)).optional(),
    }),
    handler: async ({ principal, query, deps }) => {
      const page = await listDeliveries(
        deps.db,
        {
          organizationIds: [...organizationsWith(principal, READ)],
          endpointIds: query.endpoint_id,
          start: query.start_timestamp,
          end: query.end_timestamp,
          succeeded: query.succeeded,
          query: query.query,
          httpCodeClass: query.http_code_class,
          eventTypes: query.event_type,
        },
        query,
      );
      return listResource(page, query, serializeDelivery);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhooks/events/:id/redeliver',
    operationId: 'webhooks:redeliver_webhook_event',
    summary: 'Send an event again (to one endpoint with ?endpoint_id=), same webhook-id and body',
    tag: 'webhooks',
    scopes: WRITE,
    // Accepted: the worker sends it shortly (202, as Polar answers and its SDK expects).
    status: 202,
    params: IdParams,
    query: z.object({ endpoint_id: z.string().min(1).optional() }),
    response: z.object({ event_id: z.string(), endpoint_ids: z.array(z.string()).describe('The endpoints it is sent to again') }),
    handler: async ({ principal, params, query, deps }) => {
      const endpointIds = await redeliverEvent(deps.db, deps.clock, access(principal), params.id, query.endpoint_id);
      return { event_id: params.id, endpoint_ids: endpointIds };
    },
  }),
];
