import { formatMoney, shortDate } from '../../ui/record.js';
import { choice, integer, invalidFlag, metadata, text, toInteger } from '../fields.js';
import type { FieldFlag, ResourceSpec } from '../spec.js';
import { count } from '../words.js';

/** `--amount`: 500:usd takes a fixed 5.00 USD off, 10% (or 12.5%) a share of the price. */
export function discountAmount(value: string): Record<string, unknown> {
  const percent = /^(\d{1,3}(?:\.\d{1,2})?)%$/.exec(value.trim());
  if (percent) {
    const basisPoints = Math.round(Number(percent[1]) * 100);
    if (basisPoints < 1 || basisPoints > 10_000) throw invalidFlag('--amount', value, 'a percentage is from 0.01% to 100%');
    return { type: 'percentage', basis_points: basisPoints };
  }
  const fixed = /^(\d+):([a-z]{3})$/i.exec(value.trim());
  if (!fixed) throw invalidFlag('--amount', value, 'expected AMOUNT:CURRENCY in minor units (500:usd is 5.00 USD) or a percentage (10%)');
  return { type: 'fixed', amount: Number(fixed[1]), currency: fixed[2]!.toLowerCase() };
}

/** An ISO 8601 timestamp; a bare date means its midnight UTC, `none` clears it. */
const timestamp = (flags: string, field: string, description: string): FieldFlag => ({
  flags,
  description: `${description}: ISO 8601 (2026-01-31 or 2026-01-31T12:00:00Z; none clears it)`,
  verbs: ['create', 'update'],
  keys: [field],
  apply(value, body) {
    const text = value.trim();
    if (text === 'none') body[field] = null;
    else if (/^\d{4}-\d{2}-\d{2}$/.test(text)) body[field] = `${text}T00:00:00Z`;
    else if (!Number.isNaN(Date.parse(text))) body[field] = text;
    else throw invalidFlag(flags, value, 'expected a date or an ISO 8601 timestamp');
  },
});

/** `till discounts`: fixed or percentage reductions, once, forever or for some months, with an optional code. */
export const discounts: ResourceSpec = {
  noun: 'discounts',
  singular: 'discount',
  path: '/v1/discounts/',
  verbs: ['create', 'list', 'get', 'update', 'delete'],
  organizationScoped: true,
  sorting: ['created_at', 'name', 'code', 'redemptions_count', 'ends_at'],
  filters: [{ flags: '--query <text>', description: 'name contains', param: 'query' }],
  fields: [
    text('--name <name>', 'name', 'name, shown to customers', { required: { question: 'Discount name' } }),
    {
      flags: '--amount <amount>',
      description: 'what it takes off: 500:usd (5.00 USD, in minor units) or 10% (percentages to 0.01%)',
      verbs: ['create', 'update'],
      keys: ['type', 'amount', 'amounts', 'basis_points'],
      required: { question: 'Amount off (500:usd for 5.00 USD, or 10%)' },
      apply(value, body) {
        Object.assign(body, discountAmount(value));
      },
    },
    choice('--duration <duration>', 'duration', ['once', 'forever', 'repeating'], 'how long it applies to a subscription', { required: true }),
    {
      flags: '--months <n>',
      description: 'repeating: for how many months (implies --duration repeating)',
      verbs: ['create', 'update'],
      keys: ['duration_in_months'],
      apply(value, body) {
        body.duration_in_months = toInteger('--months', value, 1);
        body.duration ??= 'repeating';
      },
    },
    text('--code <code>', 'code', 'the code customers type (3–256 letters and digits; unique, case-insensitive)'),
    timestamp('--starts-at <time>', 'starts_at', 'redeemable from'),
    timestamp('--ends-at <time>', 'ends_at', 'redeemable until'),
    integer('--max-redemptions <n>', 'max_redemptions', 'how many times it can be redeemed in all', { min: 1 }),
    {
      flags: '--product <id>',
      description: 'only for this product (repeatable; replaces the list; none given: every product)',
      verbs: ['create', 'update'],
      repeatable: true,
      keys: ['products'],
      apply(values, body) {
        body.products = values;
      },
    },
    metadata,
  ],
  columns: [
    { header: 'ID', value: (discount) => String(discount.id), max: 36 },
    { header: 'NAME', value: (discount) => String(discount.name) },
    { header: 'CODE', value: (discount) => (typeof discount.code === 'string' ? discount.code : '—') },
    {
      header: 'AMOUNT',
      value: (discount) => (discount.type === 'percentage' ? `${Number(discount.basis_points) / 100}%` : formatMoney(Number(discount.amount), String(discount.currency ?? 'usd'))),
    },
    { header: 'DURATION', value: (discount) => (discount.duration === 'repeating' ? count(Number(discount.duration_in_months), 'month') : String(discount.duration)) },
    { header: 'REDEEMED', value: (discount) => `${String(discount.redemptions_count)}${discount.max_redemptions ? `/${String(discount.max_redemptions)}` : ''}` },
    { header: 'ENDS', value: (discount) => (discount.ends_at ? shortDate(discount.ends_at) : '—') },
  ],
};
