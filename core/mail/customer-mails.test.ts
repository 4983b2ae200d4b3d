import { describe, expect, it } from 'vitest';
import { customerMailFor } from './customer-mails.js';

const seller = { name: 'Harbor Tools', slug: 'harbor-tools' };
const BASE = 'https://till.example/';
const customer = { email: 'ada@example.com' };
const event = (type: 'order.paid' | 'subscription.canceled' | 'order.created', data: Record<string, unknown>) => ({ payload: { type, timestamp: '2026-01-01T00:00:00Z', data } });

describe('customer mail of an outbox event', () => {
  it('writes the receipt of a purchase with the amount, the receipt number and the portal link', () => {
    const mail = customerMailFor(event('order.paid', { customer, billing_reason: 'purchase', total_amount: 1999, currency: 'usd', receipt_number: 'R-0001', product: { name: 'Harbor Pro' } }), seller, BASE);
    expect(mail?.kind).toBe('order_receipt');
    expect(mail?.message).toMatchObject({ to: 'ada@example.com', subject: 'Your receipt from Harbor Tools' });
    expect(mail?.message.text).toContain('Thank you for your order of Harbor Pro.');
    expect(mail?.message.text).toContain('Paid: $19.99 (receipt R-0001).');
    expect(mail?.message.text).toContain('https://till.example/portal/harbor-tools');
  });

  it('writes a renewal receipt for a renewal, with the next renewal date', () => {
    const mail = customerMailFor(
      event('order.paid', { customer, billing_reason: 'subscription_cycle', total_amount: 500, currency: 'eur', product: { name: 'Harbor Cloud' }, subscription: { current_period_end: '2026-03-01T10:00:00Z' } }),
      seller,
      BASE,
    );
    expect(mail?.kind).toBe('renewal_receipt');
    expect(mail?.message.subject).toBe('Your Harbor Cloud subscription was renewed');
    expect(mail?.message.text).toContain('The next renewal is on 2026-03-01.');
  });

  it('confirms a cancellation at the period end with the date access ends, and an ended one without', () => {
    const pending = customerMailFor(event('subscription.canceled', { customer, product: { name: 'Harbor Cloud' }, ends_at: '2026-02-01T00:00:00Z', ended_at: null }), seller, BASE);
    expect(pending?.message.text).toContain('You keep access until 2026-02-01; nothing more will be charged.');
    const ended = customerMailFor(event('subscription.canceled', { customer, product: { name: 'Harbor Cloud' }, ends_at: '2026-02-01T00:00:00Z', ended_at: '2026-02-01T00:00:00Z' }), seller, BASE);
    expect(ended?.message.text).toContain('It has ended; nothing more will be charged.');
  });

  it('sends nothing for other events, or without a customer email', () => {
    expect(customerMailFor(event('order.created', { customer }), seller, BASE)).toBeNull();
    expect(customerMailFor(event('order.paid', { billing_reason: 'purchase', total_amount: 1, currency: 'usd' }), seller, BASE)).toBeNull();
  });

  it('escapes what the seller and the product are named in the HTML part', () => {
    const mail = customerMailFor(event('order.paid', { customer, billing_reason: 'purchase', total_amount: 100, currency: 'usd', product: { name: '<b>Pro</b>' } }), seller, BASE);
    expect(mail?.message.html).toContain('&lt;b&gt;Pro&lt;/b&gt;');
    expect(mail?.message.html).not.toContain('<b>Pro</b>');
  });
});
