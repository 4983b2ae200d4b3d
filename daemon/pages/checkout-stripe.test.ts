import type { Browser, BrowserContext, Page } from 'playwright-core';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startStripeFake, type StripeFake } from '../../core/payments/stripe/fake.js';
import { STRIPE_WEBHOOK_PATH } from '../routes/stripe-webhook.js';
import { launchBrowser } from '../testing/browser.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Request } from '../testing/v1.js';
import { submit } from './testing.js';

/**
 * The hosted checkout of a Stripe organization, in Chromium. This machine cannot reach js.stripe.com, so Stripe.js
 * is replaced (page.route) by a stand-in with Stripe.js's calls the page makes: Stripe(key), elements(options),
 * create('payment').mount(el), elements.submit(), createConfirmationToken({elements}). It answers a ConfirmationToken
 * made at the Stripe fake beforehand, which tilld then confirms at the fake. What Stripe's real Payment Element does
 * inside its frames is not tested here.
 */
let daemon: TestDaemon;
let fake: StripeFake;
let stripe: Stripe;
let browser: Browser;
let owner: SignedIn;
let organizationId: string;
let productId: string;
const contexts: BrowserContext[] = [];

async function v1<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await v1Request(daemon.url, owner.token, method, path, body);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

const newCheckout = () => v1<{ id: string; url: string; client_secret: string }>('POST', '/checkouts/', { products: [productId] });
const checkoutStatus = async (id: string) => (await v1<{ status: string }>('GET', `/checkouts/${id}`)).status;

/** A stand-in for https://js.stripe.com/v3 that records what the page asked of it and answers `token`. */
const stripeJsStandIn = (token: string) => `
window.stripeCalls = [];
window.Stripe = function (key) {
  window.stripeCalls.push(['Stripe', key]);
  return {
    elements(options) {
      window.stripeCalls.push(['elements', options]);
      return {
        create(type) {
          return { mount(el) { window.stripeCalls.push(['mount', type, el.id]); el.setAttribute('data-mounted', type); } };
        },
        submit: async () => { window.stripeCalls.push(['submit']); return {}; },
      };
    },
    createConfirmationToken: async () => { window.stripeCalls.push(['createConfirmationToken']); return { confirmationToken: { id: ${JSON.stringify(token)} } }; },
  };
};`;

async function newPage(options: { javaScriptEnabled: boolean; stripeJs: 'stand-in' | 'unreachable'; token?: string }): Promise<Page> {
  const context = await browser.newContext({ javaScriptEnabled: options.javaScriptEnabled });
  contexts.push(context);
  await context.route('https://js.stripe.com/**', (route) =>
    options.stripeJs === 'stand-in' ? route.fulfill({ status: 200, contentType: 'text/javascript', body: stripeJsStandIn(options.token ?? '') }) : route.abort('internetdisconnected'),
  );
  return context.newPage();
}

async function fillContact(page: Page) {
  await page.getByLabel('Email address').fill(`buyer-${Date.now()}@example.com`);
  const country = page.getByLabel('Country');
  if (await country.count()) await country.selectOption('US');
}

beforeAll(async () => {
  fake = await startStripeFake();
  stripe = new Stripe(fake.secretKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
  [daemon, browser] = await Promise.all([
    startTestDaemon({ TILL_STRIPE_SECRET_KEY: fake.secretKey, TILL_STRIPE_PUBLISHABLE_KEY: fake.publishableKey, TILL_STRIPE_WEBHOOK_SECRET: fake.webhookSecret, TILL_STRIPE_API_BASE: fake.url }),
    launchBrowser(),
  ]);
  fake.setWebhookUrl(`${daemon.url}${STRIPE_WEBHOOK_PATH}`);
  owner = await signUp(daemon.url, { name: 'Pia Paymentelement' });
  organizationId = await createOrganization(owner, 'Element Store');
  productId = (await v1<{ id: string }>('POST', '/products/', { organization_id: organizationId, name: 'Element Kit', prices: [{ amount_type: 'fixed', price_amount: 2500, price_currency: 'usd' }] })).id;
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
  await fake?.close();
});
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close()));
});

describe('the hosted checkout of a Stripe organization in Chromium (Stripe.js stood in for)', () => {
  it('loads Stripe.js with the publishable key under a CSP that allows exactly Stripe.js\'s origins', async () => {
    const checkout = await newCheckout();
    const page = await newPage({ javaScriptEnabled: true, stripeJs: 'stand-in' });
    const response = await page.goto(checkout.url);
    const csp = response!.headers()['content-security-policy'];
    const directive = (name: string) => csp.split(';').map((part) => part.trim()).find((part) => part.startsWith(`${name} `));
    expect(directive('script-src')).toBe("script-src 'self' https://js.stripe.com https://*.js.stripe.com");
    expect(directive('frame-src')).toBe("frame-src 'self' https://js.stripe.com https://*.js.stripe.com https://hooks.stripe.com");
    expect(directive('connect-src')).toBe("connect-src 'self' https://api.stripe.com");
    expect(directive('form-action')).toBe("form-action 'self'");
    expect(await page.locator('script[src="https://js.stripe.com/v3"]').count()).toBe(1);
    expect(await page.locator('#payment-element').getAttribute('data-publishable-key')).toBe(fake.publishableKey);
    expect(await page.locator('input[name="card_number"]').count()).toBe(0);
    expect(await page.getByTestId('mode-badge').textContent()).toBe('Test mode');
    expect(await page.getByTestId('payment-mode').textContent()).toContain('Your card details go straight to Stripe, never to this site.');
    await expect.poll(() => page.locator('#payment-element').getAttribute('data-mounted')).toBe('payment');
    expect(await page.evaluate(() => (window as any).stripeCalls.slice(0, 2))).toEqual([
      ['Stripe', fake.publishableKey],
      ['elements', { mode: 'payment', amount: 2500, currency: 'usd', setupFutureUsage: 'off_session' }],
    ]);
    // Pages without the Payment Element keep 'self' only.
    const other = await page.goto(`${daemon.url}/sign-in`);
    expect(other!.headers()['content-security-policy']).not.toContain('stripe.com');
  });

  it('pays with the ConfirmationToken Stripe.js made, posted as confirmation_token_id', async () => {
    const token = (await stripe.testHelpers.confirmationTokens.create({ payment_method: 'pm_card_visa' })).id;
    const checkout = await newCheckout();
    const page = await newPage({ javaScriptEnabled: true, stripeJs: 'stand-in', token });
    await page.goto(checkout.url);
    await expect.poll(() => page.locator('#payment-element').getAttribute('data-mounted')).toBe('payment');
    await fillContact(page);
    await submit(page, 'Pay $25.00');
    expect(new URL(page.url()).pathname).toBe(`/checkout/${checkout.client_secret}/confirmation`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    expect(await checkoutStatus(checkout.id)).toBe('succeeded');
    const [payment] = await daemon.db('payments').where({ checkout_id: checkout.id });
    expect(payment).toMatchObject({ processor: 'stripe', status: 'succeeded', method_brand: 'visa', method_last4: '4242' });
    expect(fake.state.paymentIntents.get(String(payment.processor_payment_id))).toMatchObject({ amount: 2500, status: 'succeeded' });
  });

  it('sends the customer to Stripe\'s 3-D Secure page and, back on the checkout, shows the order paid', async () => {
    const token = (await stripe.testHelpers.confirmationTokens.create({ payment_method: 'pm_card_threeDSecure2Required' })).id;
    const checkout = await newCheckout();
    const page = await newPage({ javaScriptEnabled: true, stripeJs: 'stand-in', token });
    await page.goto(checkout.url);
    await expect.poll(() => page.locator('#payment-element').getAttribute('data-mounted')).toBe('payment');
    await fillContact(page);
    await page.getByRole('button', { name: 'Pay $25.00', exact: true }).click();
    // A form post cannot be redirected to another site (CSP form-action 'self'): a page goes on by itself.
    await page.waitForURL((url) => url.pathname.startsWith('/_fake/3ds/'));
    expect(await checkoutStatus(checkout.id)).toBe('confirmed');
    await submit(page, 'Complete authentication');
    expect(new URL(page.url()).pathname).toBe(`/checkout/${checkout.client_secret}/confirmation`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    expect(await checkoutStatus(checkout.id)).toBe('succeeded');
    expect(await daemon.db('orders').where({ checkout_id: checkout.id })).toHaveLength(1);
  });

  it('says that JavaScript is needed when it is off, and refuses a payment posted without Stripe\'s token', async () => {
    const checkout = await newCheckout();
    const page = await newPage({ javaScriptEnabled: false, stripeJs: 'unreachable' });
    await page.goto(checkout.url);
    expect(await page.getByTestId('javascript-needed').textContent()).toContain('JavaScript is needed to pay here');
    await fillContact(page);
    const refused = await submit(page, 'Pay $25.00');
    expect(refused?.status()).toBe(400);
    expect(await page.locator('#form-error').textContent()).toContain('JavaScript is needed to pay here');
    expect(await checkoutStatus(checkout.id)).toBe('open');
    expect(await daemon.db('payments').where({ checkout_id: checkout.id })).toHaveLength(0);
  });

  it('says so when Stripe.js cannot be loaded', async () => {
    const checkout = await newCheckout();
    const page = await newPage({ javaScriptEnabled: true, stripeJs: 'unreachable' });
    await page.goto(checkout.url);
    await expect.poll(() => page.locator('#stripe-error').textContent()).toContain('payment form could not be loaded');
  });
});
