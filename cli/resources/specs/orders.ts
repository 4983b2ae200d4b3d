import type { Body } from '../../input/data.js';
import { formatMoney, shortDate } from '../../ui/record.js';
import { isObject, text } from '../fields.js';
import type { ApiObject, FieldFlag, ResourceSpec } from '../spec.js';

/** Address flags edit one line each; the rest of the order's address is kept (prepareUpdate merges it). */
const ADDRESS_FLAGS: [flags: string, key: string, description: string][] = [
  ['--billing-line1 <text>', 'line1', 'billing address, first line'],
  ['--billing-line2 <text>', 'line2', 'billing address, second line'],
  ['--billing-postal-code <code>', 'postal_code', 'billing postal code'],
  ['--billing-city <city>', 'city', 'billing city'],
  ['--billing-state <state>', 'state', 'billing state or province (US and CA: NY or US-NY)'],
  ['--billing-country <code>', 'country', 'billing country, ISO 3166 alpha-2 (e.g. FR)'],
];

/** Bodies whose address came from the flags above, and so is only part of one. */
const partialAddress = new WeakSet<Body>();

const addressFlag = ([flags, key, description]: (typeof ADDRESS_FLAGS)[number]): FieldFlag => ({
  flags,
  description: `${description} (the order’s other address lines are kept)`,
  verbs: ['update'],
  keys: ['billing_address'],
  apply(value, body) {
    const address = isObject(body.billing_address) ? body.billing_address : {};
    address[key] = key === 'country' ? value.trim().toUpperCase() : value;
    body.billing_address = address;
    partialAddress.add(body);
  },
});

const amount = (order: ApiObject, field: string) => formatMoney(Number(order[field]), String(order.currency ?? 'usd'));

/** `till orders`: what customers bought (one per checkout and per renewal); `invoice` saves the PDF. */
export const orders: ResourceSpec = {
  noun: 'orders',
  singular: 'order',
  path: '/v1/orders/',
  verbs: ['list', 'get', 'update'],
  organizationScoped: true,
  metadataFilter: true,
  sorting: ['created_at', 'status', 'invoice_number', 'amount', 'net_amount', 'customer', 'product', 'discount', 'subscription'],
  filters: [
    { flags: '--customer <id>', description: 'only this customer’s orders (repeatable)', param: 'customer_id', repeatable: true },
    { flags: '--external-customer <id>', description: 'only the orders of the customer with this external id (repeatable)', param: 'external_customer_id', repeatable: true },
    { flags: '--product <id>', description: 'only orders of this product (repeatable)', param: 'product_id', repeatable: true },
    { flags: '--subscription <id>', description: 'only orders of this subscription (repeatable)', param: 'subscription_id', repeatable: true },
    { flags: '--checkout <id>', description: 'only the order of this checkout (repeatable)', param: 'checkout_id', repeatable: true },
    { flags: '--discount <id>', description: 'only orders that redeemed this discount (repeatable)', param: 'discount_id', repeatable: true },
    { flags: '--billing-type <type>', description: 'one_time or recurring', param: 'product_billing_type' },
  ],
  fields: [text('--billing-name <name>', 'billing_name', 'the name on the invoice', { verbs: ['update'] }), ...ADDRESS_FLAGS.map(addressFlag)],
  async prepareUpdate(body, current) {
    if (!partialAddress.has(body) || !isObject(body.billing_address)) return;
    const stored = (await current()).billing_address;
    body.billing_address = { ...(isObject(stored) ? stored : {}), ...body.billing_address };
  },
  columns: [
    { header: 'ID', value: (order) => String(order.id), max: 36 },
    { header: 'INVOICE', value: (order) => String(order.invoice_number ?? '—') },
    { header: 'STATUS', value: (order) => String(order.status) },
    { header: 'DESCRIPTION', value: (order) => String(order.description ?? '—'), max: 30 },
    { header: 'TOTAL', value: (order) => amount(order, 'total_amount') },
    { header: 'REFUNDED', value: (order) => (Number(order.refunded_amount) > 0 ? amount(order, 'refunded_amount') : '—') },
    { header: 'CUSTOMER', value: (order) => (isObject(order.customer) ? String(order.customer.email) : String(order.customer_id)) },
    { header: 'CREATED', value: (order) => shortDate(order.created_at) },
  ],
};
