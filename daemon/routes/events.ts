import { z } from 'zod';
import { metadataFilters } from '../../core/billing/shared/metadata.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import { oneOrMany, queryNumber, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { Timestamp } from '../../core/billing/shared/time.js';
import { getEvent, listEventNames, listEvents, type EventView } from '../../core/metering/events.js';
import { ingestEvents } from '../../core/metering/ingest.js';
import { EVENT_NAME_SORTING, EVENT_SORTING, Filter } from '../../core/metering/schema.js';
import { serializeEvent, serializeEventName } from '../../core/metering/serialize.js';
import { parseInput } from '../http/validate.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';

const READ = ['events:read', 'events:write'] as const;
const WRITE = ['events:write'] as const;
const TAG = 'events';

/** The largest ingest body: Polar's 10 MiB, for this route only (router.ts mounts its parser). */
export const INGEST_BODY_LIMIT = 10 * 1024 * 1024;
export const INGEST_PATH = '/v1/events/ingest';

const MetadataQuery = z.record(z.string().regex(/^[^"\\]+$/, 'Metadata keys cannot contain quotes or backslashes'), z.array(z.string()));
const toWire = (view: EventView) => serializeEvent(view.event, view.customer, view.childCount);

const Sources = oneOrMany(z.enum(['user', 'system']));

function organizationIdsOf(readable: Set<string>, requested: string[] | undefined) {
  return requested ? requested.filter((id) => readable.has(id)) : [...readable];
}

export const eventRoutes = [
  defineRoute({
    method: 'post',
    path: INGEST_PATH,
    operationId: 'events:ingest',
    summary: 'Ingest a batch of events (one invalid event refuses the batch; duplicates by external_id are skipped and counted)',
    tag: TAG,
    scopes: WRITE,
    body: z.looseObject({ events: z.array(z.unknown()) }),
    handler: async ({ principal, body, deps }) => ingestEvents(deps.db, deps.clock, (requested) => targetOrganization(principal, requested, WRITE), body),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/events',
    operationId: 'events:list',
    summary: 'List events',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      customer_id: oneOrMany(z.string()).optional(),
      external_customer_id: oneOrMany(z.string()).optional(),
      name: oneOrMany(z.string()).optional(),
      source: Sources.optional(),
      start_timestamp: Timestamp.optional(),
      end_timestamp: Timestamp.optional(),
      meter_id: z.string().optional(),
      // A meter filter as JSON, as Polar's `filter` parameter takes it.
      filter: z
        .string()
        .transform((text, ctx) => {
          try {
            return JSON.parse(text) as unknown;
          } catch {
            ctx.addIssue({ code: 'custom', message: 'filter must be a JSON meter filter' });
            return z.NEVER;
          }
        })
        .pipe(Filter)
        .optional(),
      parent_id: z.string().optional(),
      depth: queryNumber(z.coerce.number().int().min(0).max(5)).optional(),
      query: z.string().optional(),
      sorting: sortingQuery(EVENT_SORTING).default(['-timestamp']),
    }),
    handler: async ({ principal, query, rawQuery, deps }) => {
      const metadata = parseInput(MetadataQuery, metadataFilters(rawQuery), 'query');
      const filter = {
        organizationIds: organizationIdsOf(organizationsWith(principal, READ), query.organization_id),
        customerIds: query.customer_id,
        externalCustomerIds: query.external_customer_id,
        names: query.name,
        sources: query.source,
        start: query.start_timestamp,
        end: query.end_timestamp,
        meterId: query.meter_id,
        filter: query.filter,
        parentId: query.parent_id,
        topLevel: query.depth === 0,
        query: query.query,
        metadata,
      };
      return listResource(await listEvents(deps.db, filter, toSortCriteria(query.sorting), query), query, toWire);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/events/names',
    operationId: 'events:list_names',
    summary: 'List the names of ingested events, with occurrences and first and last seen',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      customer_id: oneOrMany(z.string()).optional(),
      external_customer_id: oneOrMany(z.string()).optional(),
      source: Sources.optional(),
      query: z.string().optional(),
      sorting: sortingQuery(EVENT_NAME_SORTING).default(['-last_seen']),
    }),
    handler: async ({ principal, query, deps }) => {
      const filter = {
        organizationIds: organizationIdsOf(organizationsWith(principal, READ), query.organization_id),
        customerIds: query.customer_id,
        externalCustomerIds: query.external_customer_id,
        sources: query.source,
        query: query.query,
      };
      return listResource(await listEventNames(deps.db, filter, toSortCriteria(query.sorting), query), query, serializeEventName);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/events/:id',
    operationId: 'events:get',
    summary: 'Get an event',
    tag: TAG,
    scopes: READ,
    params: z.object({ id: z.string().min(1) }),
    handler: async ({ principal, params, deps }) => toWire(await getEvent(deps.db, organizationsWith(principal, READ), params.id)),
  }),
];
