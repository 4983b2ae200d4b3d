import { describe, expect, it } from 'vitest';
import { CliError } from './errors.js';
import { pageNote, parseFields, selectFields } from './output.js';
import { count } from './resources/words.js';

describe('counts', () => {
  it('agree with their number, through the one helper', () => {
    expect(count(1, 'event')).toBe('1 event');
    expect(count(0, 'event')).toBe('0 events');
    expect(count(2, 'endpoint')).toBe('2 endpoints');
    expect(count(1, 'attempt')).toBe('1 attempt');
    expect(count(3, 'delivery')).toBe('3 deliveries');
    expect(count(2, 'day')).toBe('2 days');
    expect(count(2, 'tax')).toBe('2 taxes');
    expect(count(12500, 'event')).toBe('12,500 events');
    expect(count(2, 'person', 'people')).toBe('2 people');
  });
});

describe('the page note of a list', () => {
  it('says which page of how many, what the rows are, and how to get the rest', () => {
    expect(pageNote({ page: 1, pagination: { total_count: 42, max_page: 5 }, unit: 'customer', all: true })).toBe('Page 1 of 5, 42 customers in all: --page 2 for the next, --all for every one.');
    expect(pageNote({ page: 1, pagination: { total_count: 2, max_page: 2 }, unit: 'attempt' })).toBe('Page 1 of 2, 2 attempts in all: --page 2 for the next.');
  });

  it('is nothing when the rows shown are all there is', () => {
    expect(pageNote({ page: 1, pagination: { total_count: 1, max_page: 1 }, unit: 'attempt' })).toBeUndefined();
    expect(pageNote({ page: 3, pagination: { total_count: 21, max_page: 3 }, unit: 'attempt' })).toBeUndefined();
  });
});

describe('--json FIELDS', () => {
  const product = { id: 'p1', name: 'Pro', prices: [], customer: { email: 'a@example.com' }, description: null };

  it('keeps only the fields named, in their order, of an object or of each item of a list', () => {
    expect(selectFields(product, parseFields('name,id'))).toEqual({ name: 'Pro', id: 'p1' });
    expect(selectFields({ items: [product, { ...product, id: 'p2' }], pagination: { total_count: 2, max_page: 1 } }, ['id'])).toEqual({
      items: [{ id: 'p1' }, { id: 'p2' }],
      pagination: { total_count: 2, max_page: 1 },
    });
    expect(selectFields({ items: [], pagination: { total_count: 0, max_page: 0 } }, ['id'])).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
  });

  it('reaches into nested objects with a dotted field, and keeps a null value', () => {
    expect(selectFields(product, parseFields('customer.email, description'))).toEqual({ 'customer.email': 'a@example.com', description: null });
  });

  it('refuses a field the answer does not have, listing the ones it has', () => {
    expect(() => selectFields(product, ['nmae'])).toThrow(CliError);
    expect(() => selectFields(product, ['nmae'])).toThrow(/no field "nmae" here\. Fields: customer, description, id, name, prices\./);
  });

  it('leaves a field out as null, without refusing, for a stream whose lines differ in shape (till listen)', () => {
    expect(selectFields({ event: 'ready', secret: 'whsec_x' }, ['type', 'id'], { lenient: true })).toEqual({ type: null, id: null });
  });

  it('refuses a malformed list of fields', () => {
    for (const bad of ['', ',', 'id,,name-x', '3f2a-11']) expect(() => parseFields(bad), bad).toThrow(/--json/);
  });
});
