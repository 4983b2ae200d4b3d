import { shortDate } from '../../ui/record.js';
import { parseInterval } from '../../input/price.js';
import { boolean, isObject, metadata, text } from '../fields.js';
import type { ResourceSpec } from '../spec.js';

/** `till checkout-links`: shareable URLs that open a fresh checkout for their products each time they are followed. */
export const checkoutLinks: ResourceSpec = {
  noun: 'checkout-links',
  singular: 'checkout link',
  path: '/v1/checkout-links/',
  verbs: ['create', 'list', 'get', 'update', 'delete'],
  organizationScoped: true,
  sorting: ['created_at', 'label', 'success_url', 'allow_discount_codes'],
  filters: [{ flags: '--product <id>', description: 'only links offering this product (repeatable)', param: 'product_id', repeatable: true }],
  fields: [
    {
      flags: '--product <id>',
      description: 'a product to offer (repeatable, in order; the first is selected); on update it replaces the list',
      verbs: ['create', 'update'],
      repeatable: true,
      keys: ['products', 'product_id', 'product_price_id'],
      required: { question: 'Product id' },
      apply(values, body) {
        body.products = values;
      },
    },
    text('--label <text>', 'label', 'a label, for you, to tell links apart'),
    text('--discount <id>', 'discount_id', 'apply this discount to the checkouts it opens'),
    boolean('--allow-discount-codes <bool>', 'allow_discount_codes', 'let the customer type a discount code (default true)'),
    boolean('--require-billing-address <bool>', 'require_billing_address', 'ask for the full billing address (default false)'),
    {
      flags: '--trial <interval>',
      description: 'free trial of its recurring products: 14day, 1month… (none to remove it)',
      verbs: ['create', 'update'],
      keys: ['trial_interval', 'trial_interval_count'],
      apply(value, body) {
        const trial = value === 'none' ? null : parseInterval(value, '--trial');
        body.trial_interval = trial?.unit ?? null;
        body.trial_interval_count = trial?.count ?? null;
      },
    },
    text('--success-url <url>', 'success_url', 'where the customer goes after paying ({CHECKOUT_ID} is replaced)'),
    text('--return-url <url>', 'return_url', 'a back link shown on the checkout'),
    metadata,
  ],
  // Polar requires the processor by name; Stripe is the only one.
  prepareCreate(body) {
    if (body.payment_processor === undefined) body.payment_processor = 'stripe';
  },
  columns: [
    { header: 'ID', value: (link) => String(link.id), max: 36 },
    { header: 'LABEL', value: (link) => (typeof link.label === 'string' ? link.label : '—') },
    { header: 'PRODUCTS', value: (link) => (Array.isArray(link.products) ? link.products.map((p) => (isObject(p) ? String(p.name) : '')).join(', ') : '') },
    { header: 'URL', value: (link) => String(link.url) },
    { header: 'CREATED', value: (link) => shortDate(link.created_at) },
  ],
  createdHint: (link) => `Share ${String(link.url)}: each visit opens a fresh checkout.`,
};
