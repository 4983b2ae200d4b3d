import { formatMoney, shortDate } from '../../ui/record.js';
import type { ResourceSpec } from '../spec.js';

/** `till refunds`: money given back on orders. `create` is its own command (it confirms, showing what is refundable). */
export const refunds: ResourceSpec = {
  noun: 'refunds',
  singular: 'refund',
  path: '/v1/refunds/',
  verbs: ['list'],
  organizationScoped: true,
  sorting: ['created_at', 'amount'],
  filters: [
    { flags: '--order <id>', description: 'only refunds of this order (repeatable)', param: 'order_id', repeatable: true },
    { flags: '--customer <id>', description: 'only refunds to this customer (repeatable)', param: 'customer_id', repeatable: true },
    { flags: '--external-customer <id>', description: 'only refunds to the customer with this external id (repeatable)', param: 'external_customer_id', repeatable: true },
    { flags: '--subscription <id>', description: 'only refunds of this subscription’s orders (repeatable)', param: 'subscription_id', repeatable: true },
    { flags: '--succeeded', description: 'only refunds that went through', param: 'succeeded' },
    { flags: '--no-succeeded', description: 'only refunds that did not go through (failed, pending)', param: 'succeeded' },
  ],
  fields: [],
  columns: [
    { header: 'ID', value: (refund) => String(refund.id), max: 36 },
    { header: 'ORDER', value: (refund) => String(refund.order_id), max: 36 },
    { header: 'AMOUNT', value: (refund) => formatMoney(Number(refund.amount), String(refund.currency)) },
    { header: 'TAX', value: (refund) => formatMoney(Number(refund.tax_amount), String(refund.currency)) },
    { header: 'STATUS', value: (refund) => String(refund.status) },
    { header: 'REASON', value: (refund) => String(refund.reason) },
    { header: 'CREATED', value: (refund) => shortDate(refund.created_at) },
  ],
};
