import { shortDate } from '../../ui/record.js';
import { isObject, metadata, text } from '../fields.js';
import type { ResourceSpec } from '../spec.js';

/** `till customers`: who buys; addressed by id, or by your own id with --external. */
export const customers: ResourceSpec = {
  noun: 'customers',
  singular: 'customer',
  path: '/v1/customers/',
  verbs: ['create', 'list', 'get', 'update', 'delete'],
  organizationScoped: true,
  metadataFilter: true,
  externalId: true,
  sorting: ['created_at', 'email', 'name'],
  filters: [
    { flags: '--email <email>', description: 'only the customer with this email', param: 'email' },
    { flags: '--query <text>', description: 'name, email or external id contains', param: 'query' },
  ],
  fields: [
    text('--email <email>', 'email', 'email (unique in the organization)', { required: { question: 'Customer email' } }),
    text('--name <name>', 'name', 'name'),
    text('--external-id <id>', 'external_id', 'your id for the customer (set once)'),
    {
      flags: '--country <code>',
      description: 'billing country, ISO 3166 alpha-2 (e.g. FR); the rest of the address goes in --data billing_address',
      verbs: ['create', 'update'],
      keys: ['billing_address'],
      apply(value, body) {
        body.billing_address = { ...(isObject(body.billing_address) ? body.billing_address : {}), country: value.toUpperCase() };
      },
    },
    text('--tax-id <id>', 'tax_id', 'tax id (e.g. FR61954506077), checked against the billing country'),
    text('--locale <locale>', 'locale', 'language for emails (e.g. fr)'),
    metadata,
  ],
  deleteFlags: [{ flags: '--anonymize', description: 'also erase the name, email and address (for erasure requests)', param: 'anonymize' }],
  columns: [
    { header: 'ID', value: (customer) => String(customer.id), max: 36 },
    { header: 'EMAIL', value: (customer) => String(customer.email) },
    { header: 'NAME', value: (customer) => (typeof customer.name === 'string' ? customer.name : '—') },
    { header: 'EXTERNAL ID', value: (customer) => (typeof customer.external_id === 'string' ? customer.external_id : '—') },
    { header: 'CREATED', value: (customer) => shortDate(customer.created_at) },
  ],
};
