import { z } from 'zod';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, queryBoolean, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { EVENT_TYPE_SORTING, EventTypeUpdate, listEventTypes, serializeEventType, serializeEventTypeWithStats, updateEventType } from '../../core/metering/event-types.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

// Polar gates event types with the events scopes.
const READ = ['events:read', 'events:write'] as const;
const WRITE = ['events:write'] as const;
const TAG = 'event-types';

const access = (principal: Principal) => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });

export const eventTypeRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/event-types',
    operationId: 'event-types:list',
    summary: 'List event types: the event names seen, with labels, occurrences and first and last seen',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      customer_id: oneOrMany(z.string()).optional(),
      external_customer_id: oneOrMany(z.string()).optional(),
      query: z.string().optional(),
      root_events: queryBoolean.default(false),
      parent_id: z.uuid().optional(),
      source: z.enum(['user', 'system']).optional(),
      sorting: sortingQuery(EVENT_TYPE_SORTING).default(['-last_seen']),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const filter = {
        organizationIds: query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable],
        customerIds: query.customer_id,
        externalCustomerIds: query.external_customer_id,
        sources: query.source ? [query.source] : undefined,
        parentId: query.parent_id,
        topLevel: query.root_events,
        query: query.query,
      };
      return listResource(await listEventTypes(deps.db, deps.clock, filter, toSortCriteria(query.sorting), query), query, serializeEventTypeWithStats);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/event-types/:id',
    operationId: 'event-types:update',
    summary: "Update an event type's label",
    tag: TAG,
    scopes: WRITE,
    params: z.object({ id: z.string().min(1) }),
    body: EventTypeUpdate,
    handler: async ({ principal, params, body, deps }) => serializeEventType(await updateEventType(deps.db, deps.clock, access(principal), params.id, body)),
  }),
];
