import { CliError, EXIT } from '../../errors.js';
import type { Body } from '../../input/data.js';
import { parseInterval, parsePrice, pricesBody } from '../../input/price.js';
import { formatMoney } from '../../ui/record.js';
import { choice, invalidFlag, metadata, text } from '../fields.js';
import type { ApiObject, ResourceSpec } from '../spec.js';

/** Update bodies whose interval came from --price: checked against the product, then left out (it cannot change). */
const intervalFromPrices = new WeakSet<Body>();

/** "15.00 USD", "free", "5.00–50.00 USD", "0.5 per unit": a price as the table shows it. */
export function describePrice(price: ApiObject): string {
  const currency = String(price.price_currency ?? 'usd');
  switch (price.amount_type) {
    case 'fixed':
      return price.price_amount === 0 ? 'free' : formatMoney(Number(price.price_amount), currency);
    case 'custom': {
      const max = typeof price.maximum_amount === 'number' ? formatMoney(price.maximum_amount, currency) : '…';
      return `${formatMoney(Number(price.minimum_amount), currency)}–${max}`;
    }
    case 'metered_unit':
      return `${Number(price.unit_amount) / 100} ${currency.toUpperCase()} per unit`;
    default:
      return String(price.amount_type);
  }
}

const billing = (product: ApiObject) =>
  product.recurring_interval ? `every ${Number(product.recurring_interval_count ?? 1) > 1 ? `${String(product.recurring_interval_count)} ` : ''}${String(product.recurring_interval)}` : 'one-time';

/** `till products`: what is sold, with its prices (one-time or recurring). Never deleted: archived. */
export const products: ResourceSpec = {
  noun: 'products',
  singular: 'product',
  path: '/v1/products/',
  verbs: ['create', 'list', 'get', 'update', 'archive'],
  organizationScoped: true,
  metadataFilter: true,
  sorting: ['created_at', 'name', 'price_amount_type', 'price_amount'],
  filters: [
    { flags: '--query <text>', description: 'name contains', param: 'query' },
    { flags: '--archived', description: 'only archived products', param: 'is_archived' },
    { flags: '--no-archived', description: 'only products on sale', param: 'is_archived' },
    { flags: '--recurring', description: 'only subscriptions', param: 'is_recurring' },
    { flags: '--no-recurring', description: 'only one-time products', param: 'is_recurring' },
    { flags: '--visibility <visibility>', description: 'draft, private or public (repeatable)', param: 'visibility', repeatable: true },
    { flags: '--benefit-id <id>', description: 'only products granting this benefit (repeatable)', param: 'benefit_id', repeatable: true },
  ],
  fields: [
    text('--name <name>', 'name', 'name (3–64 characters)', { required: { question: 'Product name' } }),
    text('--description <text>', 'description', 'description (Markdown)'),
    {
      flags: '--price <spec>',
      description:
        'a price, AMOUNT:CURRENCY[:INTERVAL] in minor units: 1500:usd:month, 0:usd (free), custom:500-5000:usd (repeatable; on update the new set of prices, a price id keeps that price, the others are archived)',
      verbs: ['create', 'update'],
      repeatable: true,
      keys: ['prices'],
      required: { question: 'Price (e.g. 1500:usd:month, 0:usd, custom:500-5000:usd)' },
      apply(values, body, verb) {
        const { prices, interval } = pricesBody(values.map(parsePrice));
        body.prices = prices;
        if (!interval) return;
        body.recurring_interval = interval.unit;
        body.recurring_interval_count = interval.count;
        if (verb === 'update') intervalFromPrices.add(body);
      },
    },
    choice('--visibility <visibility>', 'visibility', ['public', 'private', 'draft'], 'who sees it'),
    {
      flags: '--trial <interval>',
      description: 'free trial of recurring products: 14day, 1month… (none to remove it)',
      verbs: ['create', 'update'],
      keys: ['trial_interval', 'trial_interval_count'],
      apply(value, body) {
        if (value === 'none') {
          body.trial_interval = null;
          body.trial_interval_count = null;
          return;
        }
        const { unit, count } = parseInterval(value, '--trial');
        body.trial_interval = unit;
        body.trial_interval_count = count;
      },
    },
    {
      flags: '--media <file-id>',
      description: 'an uploaded product_media file to show (repeatable; replaces the list)',
      verbs: ['create', 'update'],
      repeatable: true,
      keys: ['medias'],
      apply(values, body) {
        body.medias = values;
      },
    },
    {
      flags: '--custom-field <id[:required]>',
      description: 'a custom field asked at checkout, in order (repeatable; replaces the list)',
      verbs: ['create', 'update'],
      repeatable: true,
      keys: ['attached_custom_fields'],
      apply(values, body) {
        body.attached_custom_fields = values.map((value) => {
          const [id, flag, ...rest] = value.split(':');
          if (!id || rest.length > 0 || (flag !== undefined && flag !== 'required' && flag !== 'optional')) {
            throw invalidFlag('--custom-field', value, 'expected ID, ID:required or ID:optional');
          }
          return { custom_field_id: id, required: flag === 'required' };
        });
      },
    },
    metadata,
  ],
  subresource: { flags: '--benefit <id>', description: 'a benefit it grants (repeatable; replaces the list, in display order)', subpath: 'benefits', field: 'benefits' },
  async prepareUpdate(body, current) {
    if (!intervalFromPrices.has(body)) return;
    const product = await current();
    const count = Number(product.recurring_interval_count ?? 1);
    if (product.recurring_interval !== body.recurring_interval || count !== body.recurring_interval_count) {
      throw new CliError(
        'INVALID_FLAG',
        `--price: product ${String(product.id)} bills ${billing(product)}, and a product's billing interval cannot change.`,
        EXIT.invalid,
        'Leave the interval out of --price on update, or create a new product.',
      );
    }
    delete body.recurring_interval;
    delete body.recurring_interval_count;
  },
  columns: [
    { header: 'ID', value: (product) => String(product.id), max: 36 },
    { header: 'NAME', value: (product) => String(product.name) },
    { header: 'PRICE', value: (product) => (Array.isArray(product.prices) ? (product.prices as ApiObject[]).filter((price) => !price.is_archived).map(describePrice).join(', ') : '') },
    { header: 'BILLING', value: billing },
    { header: 'VISIBILITY', value: (product) => String(product.visibility) },
    { header: 'ARCHIVED', value: (product) => (product.is_archived ? 'yes' : 'no') },
  ],
};
