import { z } from 'zod';
import { Text } from '../../core/billing/customers/address.js';
import { oneOrMany } from '../../core/billing/shared/query.js';
import { isTimeZone } from '../../core/metering/buckets.js';
import { MetricsQueryShape } from '../../core/metrics/schema.js';
import { serializeMetrics, serializeMetricsLimits } from '../../core/metrics/serialize.js';
import { getMetrics } from '../../core/metrics/service.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['metrics:read'] as const;
const TAG = 'metrics';
const Ids = oneOrMany(Text.min(1)).optional();

export const metricRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/metrics',
    operationId: 'metrics:get',
    summary: 'Revenue, order, checkout and subscription metrics per interval of a date range, in a timezone, with their totals',
    tag: TAG,
    scopes: READ,
    query: z.object({
      ...MetricsQueryShape,
      organization_id: Ids,
      product_id: Ids,
      billing_type: oneOrMany(z.enum(['one_time', 'recurring'])).optional(),
      customer_id: Ids,
      metrics: oneOrMany(Text.min(1)).optional(),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const today = deps.clock.now().toLocaleDateString('en-CA', { timeZone: isTimeZone(query.timezone) ? query.timezone : 'UTC' });
      const endDate = query.end_date ?? today;
      const result = await getMetrics(deps.db, {
        startDate: query.start_date ?? new Date(Date.parse(`${endDate}T00:00:00Z`) - 30 * 86_400_000).toISOString().slice(0, 10),
        endDate,
        interval: query.interval,
        timezone: query.timezone,
        currency: query.currency,
        organizationIds,
        productIds: query.product_id,
        billingTypes: query.billing_type,
        customerIds: query.customer_id,
        metrics: query.metrics,
      });
      return serializeMetrics(result);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/metrics/limits',
    operationId: 'metrics:limits',
    summary: 'The earliest date and the widest date range each interval of /v1/metrics answers',
    tag: TAG,
    scopes: READ,
    handler: async () => serializeMetricsLimits(),
  }),
];
