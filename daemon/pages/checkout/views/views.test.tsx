import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { CheckoutWire } from '../types.js';
import { CheckoutClosedPage } from './CheckoutClosedPage.js';
import { ConfirmationPage } from './ConfirmationPage.js';

const BASE = 'https://till.example';

const checkout = (overrides: Partial<CheckoutWire> = {}): CheckoutWire =>
  ({
    id: 'chk_1',
    status: 'succeeded',
    client_secret: 'polar_c_secret',
    url: `${BASE}/checkout/polar_c_secret`,
    expires_at: '2030-01-01T12:30:00.000Z',
    success_url: `${BASE}/checkout/polar_c_secret/confirmation`,
    embed_origin: null,
    amount: 1500,
    discount_amount: 0,
    net_amount: 1500,
    tax_amount: 0,
    total_amount: 1500,
    currency: 'usd',
    customer_email: 'ada@example.com',
    organization: { name: 'Lantern Software', slug: 'lantern', avatar_url: null },
    product: { id: 'p1', name: 'Lantern Pro', description: null, is_recurring: false, recurring_interval: null, prices: [], benefits: [] },
    ...overrides,
  }) as unknown as CheckoutWire;

const html = (element: React.ReactElement) => renderToStaticMarkup(element);

describe('the confirmation page', () => {
  it('does not send the customer to a success URL that is the checkout\'s own default', () => {
    const page = html(<ConfirmationPage checkout={checkout()} receipt={{ order: null, benefits: [] }} baseUrl={BASE} mode="sandbox" />);
    expect(page).not.toContain('http-equiv="refresh"');
    expect(page).toContain('You bought Lantern Pro.');
  });

  it('refreshes itself while the payment is being confirmed, and goes nowhere else yet', () => {
    const page = html(<ConfirmationPage checkout={checkout({ status: 'confirmed', success_url: 'https://shop.example/ok' })} receipt={null} baseUrl={BASE} mode="stripe_live" />);
    expect(page).toContain('Confirming your payment');
    expect(page).toContain('content="2; url=/checkout/polar_c_secret/confirmation"');
    expect(page).not.toContain('shop.example');
    expect(page).not.toContain('Sandbox');
  });

  it('refuses to send the customer on to a non-http success URL', () => {
    const page = html(<ConfirmationPage checkout={checkout({ success_url: 'javascript:alert(1)' })} receipt={{ order: null, benefits: [] }} baseUrl={BASE} mode="sandbox" />);
    expect(page).not.toContain('javascript:');
  });

  it('names a benefit that could not be granted, with the reason', () => {
    const page = html(
      <ConfirmationPage
        checkout={checkout()}
        receipt={{ order: null, benefits: [{ id: 'b1', type: 'discord', description: 'Discord role', granted: false, error: 'Discord is not configured on this Till.' }] }}
        baseUrl={BASE}
        mode="sandbox"
      />,
    );
    expect(page).toContain('Not granted yet: Discord is not configured on this Till.');
  });
});

describe('the closed checkout page', () => {
  it('says until when an expired checkout was valid and that nothing was charged', () => {
    const page = html(<CheckoutClosedPage checkout={checkout({ status: 'expired' })} />);
    expect(page).toContain('This checkout has expired');
    expect(page).toContain('valid until 2030-01-01 12:30 UTC');
    expect(page).toContain('Nothing was charged.');
  });

  it('says a failed checkout can no longer be paid', () => {
    const page = html(<CheckoutClosedPage checkout={checkout({ status: 'failed' })} />);
    expect(page).toContain('This checkout is closed');
  });
});
