import { createHash } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../testing/browser.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Request } from '../testing/v1.js';
import { submit } from './testing.js';

/**
 * The sandbox's slow paths on the hosted checkout, in Chromium with JavaScript off: 3-D Secure on the sandbox's
 * authenticate page (completed, failed), and a payment that is processing, then declined, behind the waiting page.
 */
let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;
let owner: SignedIn;
let organizationId: string;
let productId: string;

async function v1<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await v1Request(daemon.url, owner.token, method, path, body);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

const newCheckout = () => v1<{ id: string; url: string; client_secret: string }>('POST', '/checkouts/', { products: [productId] });
const checkoutStatus = async (id: string) => (await v1<{ status: string }>('GET', `/checkouts/${id}`)).status;
const paymentsOf = (checkoutId: string) => daemon.db('payments').where({ checkout_id: checkoutId }).orderBy('created_at');

async function payWith(page: Page, url: string, card: string) {
  await page.goto(url);
  await page.getByLabel('Email address').fill(`buyer-${Date.now()}@example.com`);
  const country = page.getByLabel('Country');
  if (await country.count()) await country.selectOption('DE');
  await page.getByLabel('Card number').fill(card);
  await page.getByLabel('Expiry (MM / YY)').fill('12 / 34');
  await page.getByLabel('Security code').fill('123');
  return submit(page, 'Pay $31.00');
}

beforeAll(async () => {
  // Production's rule (TILL_SANDBOX_ONLY off), with the organization marked sandbox.
  [daemon, browser] = await Promise.all([startTestDaemon({ TILL_SANDBOX_ONLY: '0' }), launchBrowser()]);
  owner = await signUp(daemon.url, { name: 'Tess Threeds' });
  organizationId = await createOrganization(owner, 'Secure Goods');
  await v1('PATCH', `/organizations/${organizationId}/clock`, { sandbox: true });
  productId = (await v1<{ id: string }>('POST', '/products/', { organization_id: organizationId, name: 'Secure Box', prices: [{ amount_type: 'fixed', price_amount: 3100, price_currency: 'usd' }] })).id;
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
});
beforeEach(async () => {
  context = await browser.newContext({ javaScriptEnabled: false });
});
afterEach(() => context.close());

describe('3-D Secure and processing payments on the hosted checkout (sandbox, Chromium, no JavaScript)', () => {
  it('lists the 3-D Secure and processing test cards with the others', async () => {
    const checkout = await newCheckout();
    const page = await context.newPage();
    await page.goto(checkout.url);
    const cards = await page.getByTestId('sandbox-cards').textContent();
    expect(cards).toContain('4000 0027 6000 3184');
    expect(cards).toContain('4000 0000 0000 8815');
    expect(await page.getByTestId('mode-badge').textContent()).toBe('Sandbox');
  });

  it('sends the customer to the sandbox\'s authenticate page; completing it comes back to the checkout, paid', async () => {
    const checkout = await newCheckout();
    const page = await context.newPage();
    await payWith(page, checkout.url, '4000 0027 6000 3184');
    expect(new URL(page.url()).pathname).toMatch(/^\/sandbox\/authenticate\/pi_sandbox_/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Authenticate this payment');
    expect(await page.getByTestId('authenticate-amount').textContent()).toContain('$31.00');
    expect(await checkoutStatus(checkout.id)).toBe('confirmed');
    expect(await paymentsOf(checkout.id)).toMatchObject([{ status: 'requires_action' }]);

    await submit(page, 'Complete authentication');
    expect(new URL(page.url()).pathname).toBe(`/checkout/${checkout.client_secret}/confirmation`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    expect(await checkoutStatus(checkout.id)).toBe('succeeded');
    expect(await paymentsOf(checkout.id)).toMatchObject([{ status: 'succeeded', method_last4: '3184' }]);
    expect(await daemon.db('orders').where({ checkout_id: checkout.id, status: 'paid' })).toHaveLength(1);

    // The authenticate page of a settled intent only leads back; a second press changes nothing.
    await page.goBack();
    await page.reload();
    expect(new URL(page.url()).pathname).toBe(`/checkout/${checkout.client_secret}/confirmation`);
    expect(await daemon.db('orders').where({ checkout_id: checkout.id })).toHaveLength(1);
  });

  it('leads back from 3-D Secure only with the checkout\'s client secret: a payment id opens neither the authenticate page nor the checkout', async () => {
    const checkout = await newCheckout();
    const confirm = await fetch(`${daemon.url}/v1/checkouts/client/${checkout.client_secret}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ confirmation_token_id: 'tok_threeDSecure2Required', customer_email: 'gated@example.com', customer_billing_address: { country: 'DE' } }),
    });
    expect(confirm.status).toBe(200);
    const [waiting] = await paymentsOf(checkout.id);
    expect(waiting).toMatchObject({ status: 'requires_action' });
    // Its authenticate page has a random id: the one a payment id would give (as it did) is unknown.
    const derived = `pi_sandbox_${createHash('sha256').update(`intent:${waiting.idempotency_key}`).digest('hex').slice(0, 24)}`;
    expect(waiting.processor_payment_id).not.toBe(derived);
    for (const method of ['GET', 'POST']) {
      const guessed = await fetch(`${daemon.url}/sandbox/authenticate/${derived}`, { method, redirect: 'manual', headers: { origin: daemon.url, 'content-type': 'application/x-www-form-urlencoded' }, body: method === 'POST' ? 'outcome=complete' : undefined });
      expect(guessed.status).toBe(404);
    }
    // The return from the bank is the checkout's own URL: another secret with the real intent is the unknown checkout.
    const forged = await fetch(`${daemon.url}/checkout/${checkout.client_secret.slice(0, -2)}xx?payment_intent=${waiting.processor_payment_id}&redirect_status=succeeded`, { redirect: 'manual' });
    expect(forged.status).toBe(404);
    expect(await forged.text()).not.toContain('gated@example.com');
    expect(await checkoutStatus(checkout.id)).toBe('confirmed');
    expect((await fetch(`${daemon.url}/sandbox/authenticate/${waiting.processor_payment_id}`)).status).toBe(200);
  });

  it('reopens the checkout when the customer fails the authentication, and says so on the form', async () => {
    const checkout = await newCheckout();
    const page = await context.newPage();
    await payWith(page, checkout.url, '4000 0027 6000 3184');
    await submit(page, 'Fail authentication');
    const back = new URL(page.url());
    expect(back.pathname).toBe(`/checkout/${checkout.client_secret}`);
    expect(back.searchParams.get('redirect_status')).toBe('failed');
    expect(await page.getByRole('status').first().textContent()).toContain('Your payment was not completed: The authentication of your card was not completed.');
    expect(await checkoutStatus(checkout.id)).toBe('open');
    expect(await paymentsOf(checkout.id)).toMatchObject([{ status: 'failed', decline_code: 'authentication_failed' }]);

    // Another card pays the same checkout.
    await payWith(page, checkout.url, '4242 4242 4242 4242');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    expect(await checkoutStatus(checkout.id)).toBe('succeeded');
  });

  it('shows a waiting page that refreshes itself while the payment is processing, then the decline on the form', async () => {
    const checkout = await newCheckout();
    const page = await context.newPage();
    await payWith(page, checkout.url, '4000 0000 0000 8815');
    expect(new URL(page.url()).pathname).toBe(`/checkout/${checkout.client_secret}/confirmation`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Confirming your payment');
    expect(await page.locator('meta[http-equiv="refresh"]').getAttribute('content')).toMatch(/^2; url=\/checkout\/.+\/confirmation$/);
    expect(await paymentsOf(checkout.id)).toMatchObject([{ status: 'processing' }]);

    // The meta refresh (no JavaScript) asks again; the bank has declined meanwhile, so the form is back.
    await page.waitForURL((url) => url.pathname === `/checkout/${checkout.client_secret}` && url.searchParams.get('notice') === 'payment-failed', { timeout: 60_000 });
    expect(await page.getByRole('status').first().textContent()).toContain('Your payment was not completed: Your card was declined.');
    expect(await checkoutStatus(checkout.id)).toBe('open');
    expect(await paymentsOf(checkout.id)).toMatchObject([{ status: 'failed', decline_code: 'card_declined' }]);
  });
});
