import { formatMoney, shortDate } from '../../ui/record.js';
import { choice, invalidFlag, isObject } from '../fields.js';
import type { ResourceSpec } from '../spec.js';

/** What the period costs, and how often: 15.00 USD / month. */
const price = (s: Record<string, unknown>) => {
  const count = Number(s.recurring_interval_count ?? 1);
  return `${formatMoney(Number(s.amount), String(s.currency ?? 'usd'))} / ${count > 1 ? `${count} ${String(s.recurring_interval)}s` : String(s.recurring_interval)}`;
};

/**
 * `till subscriptions`: list, get, and `update` to change product (with --proration) or discount. `cancel`,
 * `uncancel` and `revoke` are commands of their own (cli/commands/subscriptions/).
 */
export const subscriptions: ResourceSpec = {
  noun: 'subscriptions',
  singular: 'subscription',
  path: '/v1/subscriptions/',
  verbs: ['list', 'get', 'update'],
  organizationScoped: true,
  metadataFilter: true,
  sorting: ['started_at', 'current_period_end', 'ended_at', 'ends_at', 'status', 'amount', 'customer', 'product', 'discount', 'created_at'],
  filters: [
    { flags: '--customer <id>', description: 'only this customer’s subscriptions (repeatable)', param: 'customer_id', repeatable: true },
    { flags: '--external-customer <id>', description: 'only those of the customer with this external id (repeatable)', param: 'external_customer_id', repeatable: true },
    { flags: '--product <id>', description: 'only subscriptions to this product (repeatable)', param: 'product_id', repeatable: true },
    { flags: '--discount <id>', description: 'only subscriptions with this discount (repeatable)', param: 'discount_id', repeatable: true },
    {
      flags: '--status <status>',
      description: 'only this status (repeatable): incomplete, incomplete_expired, trialing, active, past_due, canceled, unpaid',
      param: 'status',
      repeatable: true,
    },
    { flags: '--active', description: 'only active ones (trialing, active; as Polar, not past_due)', param: 'active' },
    { flags: '--no-active', description: 'only ended ones (canceled, unpaid)', param: 'active' },
    { flags: '--cancel-at-period-end', description: 'only those set to cancel at the period end', param: 'cancel_at_period_end' },
  ],
  fields: [
    {
      flags: '--product <id>',
      description: 'move to this product (same interval, a fixed price in the currency); see --proration',
      verbs: ['update'],
      keys: ['product_id'],
      apply(value, body) {
        body.product_id = value;
      },
    },
    choice('--proration <behavior>', 'proration_behavior', ['invoice', 'prorate'], 'with --product: bill the difference now, or on the next renewal (default: the organization’s setting)', { verbs: ['update'] }),
    {
      flags: '--discount <id|none>',
      description: 'apply this discount from the next charge; none removes it',
      verbs: ['update'],
      keys: ['discount_id'],
      apply(value, body) {
        const id = value.trim();
        if (!id) throw invalidFlag('--discount', value, 'expected a discount id or none');
        body.discount_id = id === 'none' ? null : id;
      },
    },
  ],
  columns: [
    { header: 'ID', value: (s) => String(s.id), max: 36 },
    { header: 'STATUS', value: (s) => `${String(s.status)}${s.cancel_at_period_end ? ' (cancels)' : ''}` },
    { header: 'PRODUCT', value: (s) => (isObject(s.product) ? String(s.product.name) : String(s.product_id)), max: 24 },
    { header: 'PRICE', value: price },
    { header: 'CUSTOMER', value: (s) => (isObject(s.customer) ? String(s.customer.email) : String(s.customer_id)) },
    { header: 'PERIOD END', value: (s) => shortDate(s.current_period_end) },
    { header: 'STARTED', value: (s) => (s.started_at ? shortDate(s.started_at) : '—') },
  ],
};
