import { shortDate } from '../../ui/record.js';
import type { ResourceSpec } from '../spec.js';

/** `till events`: usage events sent to meters (`till events ingest` sends them; list, get and names read them). */
export const events: ResourceSpec = {
  noun: 'events',
  singular: 'event',
  path: '/v1/events/',
  verbs: ['list', 'get'],
  organizationScoped: true,
  metadataFilter: true,
  sorting: ['timestamp'],
  filters: [
    { flags: '--name <name>', description: 'only events with this name (repeatable)', param: 'name', repeatable: true },
    { flags: '--customer <id>', description: "only this customer's events (also those sent with its external id)", param: 'customer_id', repeatable: true },
    { flags: '--external-customer <id>', description: 'only events sent with this external customer id', param: 'external_customer_id', repeatable: true },
    { flags: '--meter <id>', description: 'only the events this meter counts', param: 'meter_id' },
    { flags: '--source <source>', description: 'user (ingested) or system (meter.credited, meter.reset)', param: 'source' },
    { flags: '--start <time>', description: 'from this ISO 8601 time (with an offset: 2026-01-01T00:00:00Z)', param: 'start_timestamp' },
    { flags: '--end <time>', description: 'until this ISO 8601 time', param: 'end_timestamp' },
  ],
  fields: [],
  columns: [
    { header: 'ID', value: (event) => String(event.id), max: 36 },
    { header: 'TIME', value: (event) => shortDate(event.timestamp) },
    { header: 'NAME', value: (event) => String(event.name) },
    { header: 'CUSTOMER', value: (event) => String(event.customer_id ?? event.external_customer_id ?? '—'), max: 36 },
    { header: 'METADATA', value: (event) => JSON.stringify(event.metadata ?? {}), max: 60 },
  ],
};
