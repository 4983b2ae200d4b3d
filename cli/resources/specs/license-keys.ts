import { describeValue, shortDate } from '../../ui/record.js';
import { choice, integer, invalidFlag, isObject, toInteger } from '../fields.js';
import type { FieldFlag, ResourceSpec } from '../spec.js';

/** An integer limit, or `none` to lift it. */
const limit = (flags: string, field: string, description: string, max: number): FieldFlag => ({
  flags,
  description: `${description} (none lifts it)`,
  verbs: ['update'],
  keys: [field],
  apply(value, body) {
    if (value.trim() === 'none') body[field] = null;
    else {
      const n = toInteger(flags, value, 1);
      if (n > max) throw invalidFlag(flags, value, `at most ${max}`);
      body[field] = n;
    }
  },
});

const expiresAt: FieldFlag = {
  flags: '--expires-at <time>',
  description: 'when the key stops validating: ISO 8601 (2027-01-31 or 2027-01-31T12:00:00Z; none: never)',
  verbs: ['update'],
  keys: ['expires_at'],
  apply(value, body) {
    const text = value.trim();
    if (text === 'none') body.expires_at = null;
    else if (/^\d{4}-\d{2}-\d{2}$/.test(text)) body.expires_at = `${text}T00:00:00Z`;
    else if (!Number.isNaN(Date.parse(text))) body.expires_at = text;
    else throw invalidFlag('--expires-at', value, 'expected a date or an ISO 8601 timestamp');
  },
};

const ofLimit = (used: unknown, max: unknown) => `${describeValue(used)}${typeof max === 'number' ? `/${max}` : ''}`;

/**
 * `till license-keys`: the keys license-keys benefits issued. list/get/update here; validate, activate and
 * deactivate are commands of their own (cli/commands/license-keys/).
 */
export const licenseKeys: ResourceSpec = {
  noun: 'license-keys',
  singular: 'license key',
  path: '/v1/license-keys/',
  verbs: ['list', 'get', 'update'],
  organizationScoped: true,
  filters: [
    { flags: '--benefit <id>', description: 'only keys of this benefit (repeatable)', param: 'benefit_id', repeatable: true },
    { flags: '--status <status>', description: 'only keys in this status: granted, revoked or disabled (repeatable)', param: 'status', repeatable: true },
  ],
  fields: [
    choice('--status <status>', 'status', ['granted', 'revoked', 'disabled'], 'granted keys validate; revoked and disabled ones do not', { verbs: ['update'] }),
    integer('--usage <n>', 'usage', 'set the usage counted so far', { verbs: ['update'], min: 0 }),
    limit('--limit-activations <n>', 'limit_activations', 'how many instances may be activated (1–50)', 50),
    limit('--limit-usage <n>', 'limit_usage', 'how much usage validations may count', 2_147_483_647),
    expiresAt,
  ],
  columns: [
    { header: 'ID', value: (key) => String(key.id), max: 36 },
    { header: 'KEY', value: (key) => String(key.display_key) },
    { header: 'CUSTOMER', value: (key) => (isObject(key.customer) ? String(key.customer.email) : String(key.customer_id)) },
    { header: 'STATUS', value: (key) => String(key.status) },
    { header: 'USAGE', value: (key) => ofLimit(key.usage, key.limit_usage) },
    { header: 'ACTIVATIONS', value: (key) => (Array.isArray(key.activations) ? ofLimit(key.activations.length, key.limit_activations) : describeValue(key.limit_activations)) },
    { header: 'VALIDATIONS', value: (key) => describeValue(key.validations) },
    { header: 'EXPIRES', value: (key) => (key.expires_at ? shortDate(key.expires_at) : 'never') },
  ],
};
