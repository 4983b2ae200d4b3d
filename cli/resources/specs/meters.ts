import { shortDate } from '../../ui/record.js';
import { invalidFlag, metadata, text } from '../fields.js';
import type { ApiObject, FieldFlag, ResourceSpec } from '../spec.js';

const OPERATORS: Record<string, string> = { '=': 'eq', '==': 'eq', '!=': 'ne', '>=': 'gte', '<=': 'lte', '>': 'gt', '<': 'lt', '~': 'like', '!~': 'not_like' };

/**
 * `--where name=api_call` (also `==`), `--where tokens>10`, `--where model~gpt` (contains), `!~` (does not contain),
 * `!=`, `>=`, `<=`, `<`: one filter clause. The value is a number or true/false when it reads as one, else text.
 * A value that starts with an operator character (`name===x`, `tokens=>10`) is refused rather than stored as a
 * filter that cannot match.
 */
export function whereClause(value: string): { property: string; operator: string; value: string | number | boolean } {
  const match = /^([^=!<>~]+)(==|!=|>=|<=|!~|=|>|<|~)(.*)$/.exec(value.trim());
  if (!match) throw invalidFlag('--where', value, 'expected PROPERTY OP VALUE, e.g. name=api_call, tokens>10, model~gpt');
  const raw = match[3]!.trim();
  if (/^([=<>~]|![=~])/.test(raw)) {
    throw invalidFlag('--where', value, `the value "${raw}" starts with an operator; the operators are =, ==, !=, >, >=, <, <=, ~ (contains) and !~`);
  }
  const typed = raw === 'true' ? true : raw === 'false' ? false : /^-?\d+$/.test(raw) ? Number(raw) : raw;
  return { property: match[1]!.trim(), operator: OPERATORS[match[2]!]!, value: typed };
}

/** `--aggregate count`, `--aggregate sum:tokens` (also max, min, avg, unique). */
export function aggregation(value: string): Record<string, string> {
  const [func, property] = value.trim().split(':', 2);
  if (func === 'count' && property === undefined) return { func };
  if (['sum', 'max', 'min', 'avg', 'unique'].includes(func!) && property) return { func: func!, property };
  throw invalidFlag('--aggregate', value, 'expected count, or sum|max|min|avg|unique:PROPERTY (e.g. sum:tokens)');
}

/** `--where` (every clause must hold) or `--where-any` (one must): repeatable filter clauses. */
const clauses = (flags: string, conjunction: 'and' | 'or', description: string): FieldFlag => ({
  flags,
  description,
  verbs: ['create', 'update'],
  repeatable: true,
  keys: ['filter'],
  apply(values, body) {
    body.filter = { conjunction, clauses: values.map(whereClause) };
  },
});

const describeFilter = (filter: unknown): string => {
  const { conjunction, clauses } = (filter ?? {}) as { conjunction?: string; clauses?: ApiObject[] };
  if (!clauses?.length) return 'all events';
  return clauses.map((clause) => ('clauses' in clause ? `(${describeFilter(clause)})` : `${String(clause.property)} ${String(clause.operator)} ${JSON.stringify(clause.value)}`)).join(` ${conjunction} `);
};

/** `till meters`: what usage counts (a filter over events) and how (an aggregation); `quantities` charts it. */
export const meters: ResourceSpec = {
  noun: 'meters',
  singular: 'meter',
  path: '/v1/meters/',
  verbs: ['create', 'list', 'get', 'update', 'archive'],
  organizationScoped: true,
  metadataFilter: true,
  sorting: ['created_at', 'name'],
  filters: [
    { flags: '--query <text>', description: 'name contains', param: 'query' },
    { flags: '--archived', description: 'archived meters only (--no-archived: live ones only)', param: 'is_archived' },
  ],
  fields: [
    text('--name <name>', 'name', 'name (3 to 256 characters)', { required: { question: 'Meter name' } }),
    clauses('--where <clause>', 'and', 'a filter clause, all must hold (repeatable): name=api_call (or ==), tokens>10, tokens>=10, model~gpt (contains), model!~mini'),
    clauses('--where-any <clause>', 'or', 'a filter clause, one must hold (repeatable; instead of --where)'),
    {
      flags: '--aggregate <func>',
      description: 'count, or sum|max|min|avg|unique:PROPERTY (a metadata key), e.g. sum:tokens',
      verbs: ['create', 'update'],
      keys: ['aggregation'],
      required: { question: 'Aggregation (count, or sum:PROPERTY)' },
      apply(value, body) {
        body.aggregation = aggregation(value);
      },
    },
    metadata,
  ],
  prepareCreate(body) {
    body.filter ??= { conjunction: 'and', clauses: [] };
  },
  columns: [
    { header: 'ID', value: (meter) => String(meter.id), max: 36 },
    { header: 'NAME', value: (meter) => String(meter.name) },
    { header: 'FILTER', value: (meter) => describeFilter(meter.filter), max: 50 },
    { header: 'AGGREGATION', value: (meter) => { const a = meter.aggregation as ApiObject; return a.property ? `${String(a.func)}(${String(a.property)})` : String(a.func); } },
    { header: 'ARCHIVED', value: (meter) => (meter.archived_at ? shortDate(meter.archived_at) : '—') },
  ],
};
