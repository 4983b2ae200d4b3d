import { Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { optionKey } from './fields.js';
import { RESOURCES } from './specs/index.js';

describe('optionKey', () => {
  it('names every flag of every spec as commander stores it', () => {
    const flags = RESOURCES.flatMap((spec) => [
      ...spec.fields.map((field) => field.flags),
      ...(spec.filters ?? []).map((filter) => filter.flags),
      ...(spec.deleteFlags ?? []).map((flag) => flag.flags),
      ...(spec.subresource ? [spec.subresource.flags] : []),
    ]);
    expect(flags.length).toBeGreaterThan(40);
    for (const flag of flags) expect(optionKey(flag), flag).toBe(new Option(flag).attributeName());
  });

  it('drops --no- and camel-cases dashes', () => {
    expect(optionKey('--no-archived')).toBe('archived');
    expect(optionKey('--mime-type <type>')).toBe('mimeType');
    expect(optionKey('--custom-field <id[:required]>')).toBe('customField');
  });
});
