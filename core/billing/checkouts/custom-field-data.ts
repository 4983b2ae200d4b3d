import type { AttachedCustomField } from '../products/schema.js';
import type { CustomFieldValue } from './schema.js';

export type Issue = { loc: (string | number)[]; msg: string; type: string };

const DATE = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d\d:?\d\d)?)?$/;

/** One value checked against its field's type and properties; the message of what is wrong, if anything. */
function valueProblem(attached: AttachedCustomField, value: Exclude<CustomFieldValue, null>): string | undefined {
  const { customField: field } = attached;
  const p = field.properties as Record<string, unknown>;
  switch (field.type) {
    case 'text': {
      if (typeof value !== 'string') return 'Expected text';
      if (typeof p.min_length === 'number' && value.length < p.min_length) return `At least ${p.min_length} characters`;
      if (typeof p.max_length === 'number' && value.length > p.max_length) return `At most ${p.max_length} characters`;
      return undefined;
    }
    case 'number': {
      if (typeof value !== 'number' || !Number.isInteger(value)) return 'Expected a whole number';
      if (typeof p.ge === 'number' && value < p.ge) return `Must be at least ${p.ge}`;
      if (typeof p.le === 'number' && value > p.le) return `Must be at most ${p.le}`;
      return undefined;
    }
    case 'checkbox':
      return typeof value === 'boolean' ? undefined : 'Expected true or false';
    case 'select': {
      const options = (p.options as { value: string }[] | undefined) ?? [];
      return typeof value === 'string' && options.some((option) => option.value === value) ? undefined : `Choose one of: ${options.map((o) => o.value).join(', ')}`;
    }
    case 'date': {
      if (typeof value !== 'string' || !DATE.test(value) || Number.isNaN(Date.parse(value))) return 'Expected a date (YYYY-MM-DD)';
      // Polar's bounds on a date field are Unix timestamps (seconds).
      const seconds = Math.floor(Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value) / 1000);
      if (typeof p.ge === 'number' && seconds < p.ge) return `Must be on or after ${new Date(p.ge * 1000).toISOString().slice(0, 10)}`;
      if (typeof p.le === 'number' && seconds > p.le) return `Must be on or before ${new Date(p.le * 1000).toISOString().slice(0, 10)}`;
      return undefined;
    }
  }
}

/** Whether a required field counts as filled: a required checkbox must be ticked. */
const isFilled = (attached: AttachedCustomField, value: CustomFieldValue | undefined) =>
  value !== undefined && value !== null && value !== '' && (attached.customField.type !== 'checkbox' || value === true);

/**
 * Checks custom field data against the product's attached fields (keys are the fields' slugs). Unknown keys and
 * values of the wrong type are refused at once; missing required fields only when `complete` (at confirmation),
 * so a customer can fill the form in several updates.
 */
export function customFieldDataIssues(attachedFields: readonly AttachedCustomField[], data: Record<string, CustomFieldValue>, options: { complete: boolean }): Issue[] {
  const bySlug = new Map(attachedFields.map((attached) => [attached.customField.slug, attached]));
  const issues: Issue[] = [];
  for (const [slug, value] of Object.entries(data)) {
    const attached = bySlug.get(slug);
    if (!attached) {
      issues.push({ loc: ['body', 'custom_field_data', slug], msg: 'This product has no custom field with this slug', type: 'extra_forbidden' });
      continue;
    }
    const problem = value === null ? undefined : valueProblem(attached, value);
    if (problem) issues.push({ loc: ['body', 'custom_field_data', slug], msg: problem, type: 'value_error' });
  }
  if (options.complete) {
    for (const attached of attachedFields) {
      if (attached.required && !isFilled(attached, data[attached.customField.slug])) {
        issues.push({ loc: ['body', 'custom_field_data', attached.customField.slug], msg: 'Field required', type: 'missing' });
      }
    }
  }
  return issues;
}
