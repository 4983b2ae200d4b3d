import { formatMoney, shortDate } from '../../ui/record.js';
import { boolean, invalidFlag, isObject, metadata, text, toInteger } from '../fields.js';
import type { ResourceSpec } from '../spec.js';

/** `till checkouts`: payment pages for products; `open` prints (and opens) the hosted page of one. */
export const checkouts: ResourceSpec = {
  noun: 'checkouts',
  singular: 'checkout',
  path: '/v1/checkouts/',
  verbs: ['create', 'list', 'get'],
  organizationScoped: true,
  sorting: ['created_at', 'expires_at', 'status'],
  filters: [
    { flags: '--product <id>', description: 'only checkouts of this product (repeatable)', param: 'product_id', repeatable: true },
    { flags: '--customer <id>', description: 'only checkouts of this customer (repeatable)', param: 'customer_id', repeatable: true },
    { flags: '--status <status>', description: 'only open, confirmed, succeeded, failed or expired ones (repeatable)', param: 'status', repeatable: true },
    { flags: '--query <text>', description: 'customer email or name contains', param: 'query' },
  ],
  fields: [
    {
      flags: '--product <id>',
      description: 'a product to offer (repeatable; the first is selected)',
      verbs: ['create'],
      repeatable: true,
      keys: ['products', 'product_price_id', 'product_id'],
      required: { question: 'Product id' },
      apply(values, body) {
        body.products = values;
      },
    },
    text('--price <id>', 'product_price_id', 'sell at this price of the product (default: its price in the organization’s currency)', { verbs: ['create'] }),
    {
      flags: '--amount <n>',
      description: 'what the customer pays for a pay-what-you-want price, in minor units (500 is 5.00 USD)',
      verbs: ['create'],
      keys: ['amount'],
      apply(value, body) {
        body.amount = toInteger('--amount', value, 0);
      },
    },
    text('--currency <code>', 'currency', 'sell in this currency (lowercase ISO 4217, e.g. eur)', { verbs: ['create'] }),
    text('--discount <id>', 'discount_id', 'apply this discount', { verbs: ['create'] }),
    boolean('--allow-discount-codes <bool>', 'allow_discount_codes', 'let the customer type a discount code (default true)', { verbs: ['create'] }),
    boolean('--require-billing-address <bool>', 'require_billing_address', 'ask for the full billing address (default false)', { verbs: ['create'] }),
    text('--customer <id>', 'customer_id', 'for this existing customer', { verbs: ['create'] }),
    text('--external-customer-id <id>', 'external_customer_id', 'your id for the customer (links or creates the customer on payment)', { verbs: ['create'] }),
    text('--customer-email <email>', 'customer_email', 'prefill the customer’s email', { verbs: ['create'] }),
    text('--customer-name <name>', 'customer_name', 'prefill the customer’s name', { verbs: ['create'] }),
    {
      flags: '--customer-country <code>',
      description: 'prefill the billing country, ISO 3166 alpha-2 (sets the tax rate)',
      verbs: ['create'],
      keys: ['customer_billing_address'],
      apply(value, body) {
        const country = value.trim().toUpperCase();
        if (!/^[A-Z]{2}$/.test(country)) throw invalidFlag('--customer-country', value, 'expected a two-letter country code such as FR');
        body.customer_billing_address = { ...(isObject(body.customer_billing_address) ? body.customer_billing_address : {}), country };
      },
    },
    text('--success-url <url>', 'success_url', 'where the customer goes after paying (default: Till’s confirmation page)', { verbs: ['create'] }),
    metadata,
  ],
  columns: [
    { header: 'ID', value: (checkout) => String(checkout.id), max: 36 },
    { header: 'STATUS', value: (checkout) => String(checkout.status) },
    { header: 'PRODUCT', value: (checkout) => (isObject(checkout.product) ? String(checkout.product.name) : String(checkout.product_id)) },
    { header: 'TOTAL', value: (checkout) => formatMoney(Number(checkout.total_amount), String(checkout.currency ?? 'usd')) },
    { header: 'CUSTOMER', value: (checkout) => (typeof checkout.customer_email === 'string' ? checkout.customer_email : '—') },
    { header: 'EXPIRES', value: (checkout) => shortDate(checkout.expires_at) },
  ],
  createdHint: (checkout) => `Open the payment page with \`till checkouts open ${String(checkout.id)}\` (sandbox: pay with 4242 4242 4242 4242).`,
};
