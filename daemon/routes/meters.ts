import { z } from 'zod';
import { metadataFilters } from '../../core/billing/shared/metadata.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, queryBoolean, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { Timestamp } from '../../core/billing/shared/time.js';
import { createMeter, getMeter, listMeters, quantitiesOf, updateMeter } from '../../core/metering/meters.js';
import { AGGREGATION_FUNCTIONS, METER_SORTING, MeterCreate, MeterUpdate, TIME_INTERVALS } from '../../core/metering/schema.js';
import { serializeMeter } from '../../core/metering/serialize.js';
import { parseInput } from '../http/validate.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';

const READ = ['meters:read', 'meters:write'] as const;
const WRITE = ['meters:write'] as const;
const TAG = 'meters';
const IdParams = z.object({ id: z.string().min(1) });
const MetadataQuery = z.record(z.string().regex(/^[^"\\]+$/, 'Metadata keys cannot contain quotes or backslashes'), z.array(z.string()));

const access = (principal: Principal) => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });

export const meterRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/meters',
    operationId: 'meters:list',
    summary: 'List meters',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      query: z.string().optional(),
      is_archived: queryBoolean.optional(),
      sorting: sortingQuery(METER_SORTING).default(['name']),
    }),
    handler: async ({ principal, query, rawQuery, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const metadata = parseInput(MetadataQuery, metadataFilters(rawQuery), 'query');
      const page = await listMeters(deps.db, { organizationIds, query: query.query, isArchived: query.is_archived, metadata }, toSortCriteria(query.sorting), query);
      return listResource(page, query, serializeMeter);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/meters',
    operationId: 'meters:create',
    summary: 'Create a meter: a filter over events and an aggregation',
    tag: TAG,
    scopes: WRITE,
    status: 201,
    body: MeterCreate,
    handler: async ({ principal, body, deps }) => serializeMeter(await createMeter(deps.db, deps.clock, targetOrganization(principal, body.organization_id, WRITE), body)),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/meters/:id',
    operationId: 'meters:get',
    summary: 'Get a meter',
    tag: TAG,
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps }) => serializeMeter(await getMeter(deps.db, organizationsWith(principal, READ), params.id)),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/meters/:id',
    operationId: 'meters:update',
    summary: 'Update or archive a meter (a meter a live price bills cannot be archived)',
    tag: TAG,
    scopes: WRITE,
    params: IdParams,
    body: MeterUpdate,
    handler: async ({ principal, params, body, deps }) => serializeMeter(await updateMeter(deps.db, deps.clock, access(principal), params.id, body)),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/meters/:id/quantities',
    operationId: 'meters:quantities',
    summary: "A meter's quantity per interval and in total, computed in the database",
    tag: TAG,
    scopes: READ,
    params: IdParams,
    // Polar requires start, end and interval (the SDK always sends them); Till defaults to the last 30 days, by day.
    query: z.object({
      start_timestamp: Timestamp.optional(),
      end_timestamp: Timestamp.optional(),
      interval: z.enum(TIME_INTERVALS).default('day'),
      timezone: z.string().min(1).max(64).default('UTC'),
      customer_id: oneOrMany(z.string()).optional(),
      external_customer_id: oneOrMany(z.string()).optional(),
      customer_aggregation_function: z.enum(AGGREGATION_FUNCTIONS).optional(),
    }),
    handler: async ({ principal, params, query, rawQuery, deps }) => {
      const metadata = parseInput(MetadataQuery, metadataFilters(rawQuery), 'query');
      const result = await quantitiesOf(deps.db, organizationsWith(principal, READ), params.id, {
        start: query.start_timestamp ?? new Date((query.end_timestamp ?? deps.clock.now()).getTime() - 30 * 86_400_000),
        end: query.end_timestamp ?? deps.clock.now(),
        interval: query.interval,
        timezone: query.timezone,
        customerIds: query.customer_id,
        externalCustomerIds: query.external_customer_id,
        customerAggregationFunction: query.customer_aggregation_function,
        metadata,
      });
      return { quantities: result.quantities.map((bucket) => ({ timestamp: bucket.timestamp.toISOString(), quantity: bucket.quantity })), total: result.total };
    },
  }),
];
