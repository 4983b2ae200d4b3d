import { shortDate } from '../../ui/record.js';
import type { ApiObject, ResourceSpec } from '../spec.js';

/** `till customer-meters`: each customer's consumption, credits and balance on each meter. */
export const customerMeters: ResourceSpec = {
  noun: 'customer-meters',
  singular: 'customer meter',
  path: '/v1/customer-meters/',
  verbs: ['list', 'get'],
  organizationScoped: true,
  sorting: ['created_at', 'modified_at', 'customer_id', 'customer_name', 'meter_id', 'meter_name', 'consumed_units', 'credited_units', 'balance'],
  filters: [
    { flags: '--customer <id>', description: 'only this customer (repeatable)', param: 'customer_id', repeatable: true },
    { flags: '--external-customer <id>', description: 'only the customer with this external id (repeatable)', param: 'external_customer_id', repeatable: true },
    { flags: '--meter <id>', description: 'only this meter (repeatable; archived meters only when named)', param: 'meter_id', repeatable: true },
  ],
  fields: [],
  columns: [
    { header: 'ID', value: (row) => String(row.id), max: 36 },
    { header: 'CUSTOMER', value: (row) => String((row.customer as ApiObject | undefined)?.email ?? row.customer_id) },
    { header: 'METER', value: (row) => String((row.meter as ApiObject | undefined)?.name ?? row.meter_id) },
    { header: 'CONSUMED', value: (row) => String(row.consumed_units) },
    { header: 'CREDITED', value: (row) => String(row.credited_units) },
    { header: 'BALANCE', value: (row) => String(row.balance) },
    { header: 'UPDATED', value: (row) => shortDate(row.modified_at ?? row.created_at) },
  ],
};
