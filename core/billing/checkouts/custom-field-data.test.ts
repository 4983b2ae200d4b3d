import { describe, expect, it } from 'vitest';
import type { CustomField, CustomFieldType } from '../custom-fields/schema.js';
import type { AttachedCustomField } from '../products/schema.js';
import { customFieldDataIssues } from './custom-field-data.js';

const field = (type: CustomFieldType, slug: string, properties: Record<string, unknown>, required = false): AttachedCustomField => ({
  customField: { id: slug, organizationId: 'o', type, slug, name: slug, properties, metadata: {}, createdAt: new Date(), modifiedAt: null } as CustomField,
  order: 0,
  required,
});

const fields = [
  field('text', 'company', { min_length: 2, max_length: 5 }),
  field('select', 'size', { options: [{ value: 's', label: 'Small' }, { value: 'm', label: 'Medium' }] }),
  field('date', 'start', { ge: Date.parse('2026-01-01T00:00:00Z') / 1000 }),
  field('checkbox', 'terms', {}, true),
  field('number', 'seats', { ge: 1, le: 10 }, true),
];
const slugsOf = (issues: { loc: (string | number)[] }[]) => issues.map((issue) => issue.loc.at(-1));

describe('custom field data', () => {
  it('accepts values of the right type within their bounds', () => {
    expect(customFieldDataIssues(fields, { company: 'Acme', size: 'm', start: '2026-05-01', terms: true, seats: 3 }, { complete: true })).toEqual([]);
  });

  it('refuses text out of its length, an unknown option, an early date, a wrong type and an unknown slug', () => {
    const issues = customFieldDataIssues(fields, { company: 'A', size: 'xl', start: '2025-12-31', seats: '3', other: 1 }, { complete: false });
    expect(slugsOf(issues)).toEqual(['company', 'size', 'start', 'seats', 'other']);
  });

  it('asks for required fields only when complete, and counts an unticked required checkbox as missing', () => {
    expect(customFieldDataIssues(fields, { terms: false }, { complete: false })).toEqual([]);
    const issues = customFieldDataIssues(fields, { terms: false }, { complete: true });
    expect(issues.map((issue) => [issue.loc.at(-1), issue.type])).toEqual([['terms', 'missing'], ['seats', 'missing']]);
  });
});
