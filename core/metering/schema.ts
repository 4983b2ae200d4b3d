import { z } from 'zod';
import { Metadata } from '../billing/shared/metadata.js';

export const FILTER_OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'like', 'not_like'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];
export const AGGREGATION_FUNCTIONS = ['count', 'sum', 'max', 'min', 'avg', 'unique'] as const;
export type AggregationFunction = (typeof AGGREGATION_FUNCTIONS)[number];
export const METER_UNITS = ['scalar', 'token', 'custom'] as const;
export const TIME_INTERVALS = ['hour', 'day', 'week', 'month', 'year'] as const;
export type TimeInterval = (typeof TIME_INTERVALS)[number];
export const METER_SORTING = ['created_at', 'name'] as const;
export const EVENT_SORTING = ['timestamp'] as const;
export const EVENT_NAME_SORTING = ['name', 'occurrences', 'first_seen', 'last_seen'] as const;
export const CUSTOMER_METER_SORTING = ['created_at', 'modified_at', 'customer_id', 'customer_name', 'meter_id', 'meter_name', 'consumed_units', 'credited_units', 'balance'] as const;

/** The event columns a filter or aggregation may name directly; any other property is a metadata key. */
export const EVENT_FIELDS = ['name', 'source', 'customer_id', 'external_customer_id', 'external_id'] as const;
export type EventField = (typeof EVENT_FIELDS)[number];
export const isEventField = (property: string): property is EventField => (EVENT_FIELDS as readonly string[]).includes(property);

const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;

/**
 * A property as Polar reads it: `metadata.` is stripped (so `metadata.tokens` and `tokens` are the same key).
 * Quotes and backslashes are refused: the key goes into a JSON path on SQLite.
 */
const Property = z
  .string()
  .min(1)
  .max(128)
  .transform((value) => (value.startsWith('metadata.') ? value.slice('metadata.'.length) : value))
  .refine((value) => value.length > 0 && !/["\\]/.test(value), 'A property is an event field or a metadata key without quotes or backslashes');

export const FilterClause = z.object({
  property: Property,
  operator: z.enum(FILTER_OPERATORS),
  value: z.union([z.string().max(1000), z.number().int().min(INT_MIN).max(INT_MAX), z.boolean()]),
});
export type FilterClause = z.infer<typeof FilterClause>;

export interface Filter {
  conjunction: 'and' | 'or';
  clauses: (FilterClause | Filter)[];
}

export const Filter: z.ZodType<Filter> = z.lazy(() =>
  z.object({
    conjunction: z.enum(['and', 'or']),
    clauses: z.array(z.union([FilterClause, Filter])).max(100),
  }),
);

export const isClause = (item: FilterClause | Filter): item is FilterClause => 'operator' in item;

const NumericAggregation = z.object({
  func: z.enum(['sum', 'max', 'min', 'avg']),
  property: Property.refine((value) => !isEventField(value), 'sum, max, min and avg need a numeric metadata property (metadata.<key>)'),
});
export const Aggregation = z.discriminatedUnion(
  'func',
  [z.object({ func: z.literal('count') }), NumericAggregation, z.object({ func: z.literal('unique'), property: Property })],
  { error: 'Expected func count, sum, max, min, avg or unique' },
);
export type Aggregation = z.infer<typeof Aggregation>;

const MeterName = z.string().trim().min(3).max(256);

export const MeterCreate = z.object({
  name: MeterName,
  filter: Filter,
  aggregation: Aggregation,
  unit: z.enum(METER_UNITS).default('scalar'),
  custom_label: z.string().max(64).nullish(),
  custom_multiplier: z.number().int().min(1).nullish(),
  metadata: Metadata.optional(),
  organization_id: z.string().min(1).nullish(),
});
export type MeterCreate = z.infer<typeof MeterCreate>;

export const MeterUpdate = z.object({
  name: MeterName.nullish(),
  filter: Filter.nullish(),
  aggregation: Aggregation.nullish(),
  unit: z.enum(METER_UNITS).nullish(),
  custom_label: z.string().max(64).nullish(),
  custom_multiplier: z.number().int().min(1).nullish(),
  metadata: Metadata.optional(),
  is_archived: z.boolean().nullish(),
});
export type MeterUpdate = z.infer<typeof MeterUpdate>;

export interface Meter {
  id: string;
  organizationId: string;
  name: string;
  filter: Filter;
  aggregation: Aggregation;
  unit: (typeof METER_UNITS)[number];
  customLabel: string | null;
  customMultiplier: number | null;
  metadata: Metadata;
  createdAt: Date;
  modifiedAt: Date | null;
  archivedAt: Date | null;
}

export type EventMetadata = Record<string, string | number | boolean>;

/** An event as stored (user events are ingested; system events are written by Till). */
export interface StoredEvent {
  id: string;
  organizationId: string;
  name: string;
  source: 'user' | 'system';
  timestamp: Date;
  ingestedAt: Date;
  customerId: string | null;
  externalCustomerId: string | null;
  externalId: string | null;
  parentId: string | null;
  metadata: EventMetadata;
}

export interface CustomerMeter {
  id: string;
  organizationId: string;
  customerId: string;
  meterId: string;
  consumedUnits: number;
  creditedUnits: number;
  balance: number;
  createdAt: Date;
  modifiedAt: Date | null;
}

/** System events Till writes for customer meters (Polar's names). */
export const METER_CREDITED = 'meter.credited';
export const METER_RESET = 'meter.reset';
