import { describe, expect, it } from 'vitest';
import { inputForLocation, parseCard, parseCheckoutForm } from './form.js';
import type { CheckoutWire } from './types.js';

const field = (slug: string, type: 'text' | 'number' | 'checkbox' | 'select' | 'date', properties: Record<string, unknown>, required = true) => ({
  custom_field_id: `id-${slug}`,
  order: 0,
  required,
  custom_field: { id: `id-${slug}`, slug, name: slug, type, properties },
});

const checkout = (overrides: Partial<CheckoutWire> = {}): CheckoutWire =>
  ({
    id: 'c1',
    status: 'open',
    currency: 'usd',
    product_id: 'p1',
    products: [{ id: 'p1' }, { id: 'p2' }],
    product_price: { id: 'pr1', amount_type: 'fixed', price_currency: 'usd', price_amount: 1500, is_archived: false },
    allow_discount_codes: true,
    billing_address_fields: { country: 'required', state: 'disabled', city: 'disabled', postal_code: 'disabled', line1: 'disabled', line2: 'disabled' },
    attached_custom_fields: [
      field('company', 'text', { min_length: 3 }),
      field('seats', 'number', { ge: 1, le: 10 }),
      field('terms', 'checkbox', {}),
      field('plan', 'select', { options: [{ value: 'a', label: 'A' }] }, false),
      field('start', 'date', { ge: Date.UTC(2030, 0, 1) / 1000 }, false),
    ],
    ...overrides,
  }) as unknown as CheckoutWire;

describe('reading the checkout form', () => {
  it('asks for required fields only when paying', () => {
    const applying = parseCheckoutForm(checkout(), { intent: 'apply_discount', discount_code: 'SAVE' });
    expect(applying.errors).toEqual({});
    expect(applying.update).toMatchObject({ discount_code: 'SAVE', customer_email: null, custom_field_data: { company: null, seats: null, terms: false } });

    const paying = parseCheckoutForm(checkout(), { intent: 'pay' });
    expect(Object.keys(paying.errors).sort()).toEqual(['address_country', 'cf_company', 'cf_seats', 'cf_terms', 'customer_email']);
  });

  it('turns typed values into the custom fields\' types and checks their properties', () => {
    const ok = parseCheckoutForm(checkout(), { intent: 'pay', customer_email: 'a@b.example', address_country: 'de', cf_company: 'Acme', cf_seats: '4', cf_terms: 'on', cf_plan: 'a', cf_start: '2030-02-01', expected_total: '1500' });
    expect(ok.errors).toEqual({});
    expect(ok.expectedTotal).toBe(1500);
    expect(ok.update.custom_field_data).toEqual({ company: 'Acme', seats: 4, terms: true, plan: 'a', start: '2030-02-01' });
    expect(ok.update.customer_billing_address).toMatchObject({ country: 'DE' });

    const bad = parseCheckoutForm(checkout(), { intent: 'update', cf_company: 'Ac', cf_seats: '4.5', cf_plan: 'z', cf_start: '2029-12-31' });
    expect(bad.errors).toEqual({
      cf_company: 'Use at least 3 characters.',
      cf_seats: 'Enter a whole number.',
      cf_plan: 'Choose one of the options.',
      cf_start: 'Choose 2030-01-01 or later.',
    });
    expect(bad.typed).toMatchObject({ cf_company: 'Ac', cf_seats: '4.5' });
  });

  it('reads a custom amount within the price\'s bounds', () => {
    const custom = checkout({ product_price: { id: 'pr', amount_type: 'custom', price_currency: 'usd', minimum_amount: 500, maximum_amount: 1000, is_archived: false } });
    expect(parseCheckoutForm(custom, { amount: '7.5' }).update.amount).toBe(750);
    expect(parseCheckoutForm(custom, { amount: '4.99' }).errors.amount).toBe('Pay at least $5.00.');
    expect(parseCheckoutForm(custom, { amount: '10.01' }).errors.amount).toBe('Pay at most $10.00.');
  });

  it('switches product only to one the checkout offers, leaving the old product\'s fields out', () => {
    const switched = parseCheckoutForm(checkout(), { product_id: 'p2', cf_company: 'Acme' });
    expect(switched.update.product_id).toBe('p2');
    expect(switched.update.custom_field_data).toBeUndefined();
    expect(parseCheckoutForm(checkout(), { product_id: 'p9' }).errors.product_id).toBeTruthy();
  });

  it('never keeps the card among the values shown again', () => {
    const form = parseCheckoutForm(checkout(), { intent: 'pay', card_number: '4242424242424242', card_cvc: '123' });
    expect(JSON.stringify(form)).not.toContain('4242');
  });
});

describe('reading the card', () => {
  it('takes spaces in the number and MM / YY or MM / YYYY', () => {
    expect(parseCard({ card_number: '4242 4242 4242 4242', card_expiry: '12 / 34', card_cvc: '123' })).toEqual({
      ok: true,
      card: { kind: 'card', number: '4242424242424242', expMonth: 12, expYear: 34, cvc: '123' },
    });
    expect(parseCard({ card_number: '4242424242424242', card_expiry: '1/2034', card_cvc: '1234' })).toMatchObject({ ok: true, card: { expMonth: 1, expYear: 2034 } });
  });

  it('names each missing or malformed part', () => {
    expect(parseCard({})).toEqual({ ok: false, errors: { card_number: 'Enter your card number.', card_expiry: "Enter your card's expiry date.", card_cvc: "Enter your card's security code." } });
    expect(parseCard({ card_number: '4242', card_expiry: '1234', card_cvc: '12' })).toMatchObject({ ok: false, errors: { card_number: expect.any(String), card_expiry: 'Enter the expiry date as MM / YY.', card_cvc: expect.any(String) } });
  });
});

describe('placing a service error', () => {
  it('maps Polar locations to the form\'s inputs', () => {
    expect(inputForLocation(['body', 'custom_field_data', 'company'])).toBe('cf_company');
    expect(inputForLocation(['body', 'customer_billing_address', 'state'])).toBe('address_state');
    expect(inputForLocation(['body', 'customer_email'])).toBe('customer_email');
    expect(inputForLocation(['body', 'card_number'])).toBe('card_number');
    expect(inputForLocation(['body'])).toBeUndefined();
  });
});
