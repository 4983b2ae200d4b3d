import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../testing/browser.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Request } from '../testing/v1.js';
import { postForm, submit } from './testing.js';

let daemon: TestDaemon;
let browser: Browser;
let context: BrowserContext;
let owner: SignedIn;
let organizationId: string;

/** The catalogue the tests sell from. */
const catalog = {} as {
  oneTime: string;
  monthly: string;
  free: string;
  payWhatYouWant: string;
  withFields: string;
  discountCode: string;
  licenseBenefit: string;
};

async function v1<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await v1Request(daemon.url, owner.token, method, path, body);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

const product = (body: Record<string, unknown>) => v1<{ id: string }>('POST', '/products/', { organization_id: organizationId, ...body }).then((p) => p.id);

interface CheckoutJson {
  id: string;
  url: string;
  client_secret: string;
  status: string;
  total_amount: number;
}

const newCheckout = (productId: string, extra: Record<string, unknown> = {}) => v1<CheckoutJson>('POST', '/checkouts/', { products: [productId], ...extra });
const checkoutNow = (id: string) => v1<CheckoutJson & Record<string, any>>('GET', `/checkouts/${id}`);
const ordersOfIn = (organization: string, checkoutId: string) =>
  v1<{ items: any[] }>('GET', `/orders/?organization_id=${organization}&checkout_id=${checkoutId}`).then((page) => page.items);
const ordersOf = (checkoutId: string) => ordersOfIn(organizationId, checkoutId);

const GOOD_CARD = '4242 4242 4242 4242';
const DECLINED_CARD = '4000 0000 0000 0002';

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchBrowser()]);
  owner = await signUp(daemon.url, { name: 'Cora Checkout' });
  organizationId = await createOrganization(owner, 'Lantern Software');
  const note = await v1<{ id: string }>('POST', '/benefits/', {
    organization_id: organizationId,
    type: 'custom',
    description: 'Priority support',
    properties: { note: 'Write to help@lantern.example with your order number.' },
  });
  const license = await v1<{ id: string }>('POST', '/benefits/', {
    organization_id: organizationId,
    type: 'license_keys',
    description: 'Lantern license',
    properties: { prefix: 'LANTERN', expires: null, activations: null, limit_usage: null },
  });
  catalog.licenseBenefit = license.id;
  const text = await v1<{ id: string }>('POST', '/custom-fields/', {
    organization_id: organizationId,
    type: 'text',
    slug: 'company',
    name: 'Company',
    properties: { form_label: 'Company name', min_length: 3, max_length: 40 },
  });
  const seats = await v1<{ id: string }>('POST', '/custom-fields/', {
    organization_id: organizationId,
    type: 'number',
    slug: 'seats',
    name: 'Seats',
    properties: { form_label: 'Number of seats', ge: 1, le: 10 },
  });
  const terms = await v1<{ id: string }>('POST', '/custom-fields/', {
    organization_id: organizationId,
    type: 'checkbox',
    slug: 'terms',
    name: 'Terms',
    properties: { form_label: 'I accept the terms' },
  });

  catalog.oneTime = await product({ name: 'Lantern Pro', description: 'The desktop app, forever.', prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }] });
  await v1('POST', `/products/${catalog.oneTime}/benefits`, { benefits: [note.id, license.id] });
  catalog.monthly = await product({ name: 'Lantern Cloud', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 1000, price_currency: 'usd' }] });
  catalog.free = await product({ name: 'Lantern Lite', prices: [{ amount_type: 'free', price_currency: 'usd' }] });
  await v1('POST', `/products/${catalog.free}/benefits`, { benefits: [license.id] });
  catalog.payWhatYouWant = await product({
    name: 'Lantern Tip Jar',
    prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 500, maximum_amount: 10000, preset_amount: 1000 }],
  });
  catalog.withFields = await product({
    name: 'Lantern Teams',
    prices: [{ amount_type: 'fixed', price_amount: 4900, price_currency: 'usd' }],
    attached_custom_fields: [
      { custom_field_id: text.id, required: true },
      { custom_field_id: seats.id, required: true },
      { custom_field_id: terms.id, required: true },
    ],
  });
  catalog.discountCode = `LAUNCH${Math.random().toString(36).slice(2, 6).toUpperCase()}`;
  await v1('POST', '/discounts/', { organization_id: organizationId, name: 'Launch week', code: catalog.discountCode, type: 'percentage', basis_points: 2500, duration: 'once' });
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
});
afterEach(() => context.close());

async function fillContact(page: Page, email: string, name = 'Ada Buyer') {
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Name (optional)').fill(name);
}

async function fillCard(page: Page, number: string) {
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry (MM / YY)').fill('12 / 34');
  await page.getByLabel('Security code').fill('123');
}

/** The country select appears when the checkout asks for a billing address (Polar asks for the country by default). */
async function chooseCountry(page: Page, code = 'DE') {
  const country = page.getByLabel('Country');
  if (await country.count()) await country.selectOption(code);
}

const amountCell = (page: Page, which: string) => page.locator(`.summary [data-amount="${which}"]`).textContent();

describe('the hosted checkout page in Chromium', () => {
  it('sells a one-time product: card paid, order and benefits shown on the confirmation', async () => {
    const checkout = await newCheckout(catalog.oneTime);
    expect(checkout.url).toBe(`${daemon.baseUrl}/checkout/${checkout.client_secret}`);
    const page = await context.newPage();
    const shown = await page.goto(checkout.url);
    expect(shown?.status()).toBe(200);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Lantern Pro');
    expect(await page.title()).toBe('Lantern Pro · Lantern Software');
    expect(await page.getByTestId('price').textContent()).toBe('$15.00');
    expect(await amountCell(page, 'total')).toBe('$15.00');
    expect(await page.getByTestId('sandbox-cards').textContent()).toContain('4242 4242 4242 4242');

    const email = `ada-${Date.now()}@example.com`;
    await fillContact(page, email);
    await chooseCountry(page);
    await fillCard(page, GOOD_CARD);
    const paid = await submit(page, 'Pay $15.00');
    expect(paid?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe(`/checkout/${checkout.client_secret}/confirmation`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    expect(await page.getByRole('status').first().textContent()).toContain(`You bought Lantern Pro. The order is under ${email}.`);
    const body = await page.locator('body').textContent();
    expect(body).toContain('Write to help@lantern.example with your order number.');
    expect(await page.getByTestId('license-key').textContent()).toMatch(/^LANTERN/);
    // The card number reaches no page.
    expect(await page.content()).not.toContain('4242424242424242');

    expect((await checkoutNow(checkout.id)).status).toBe('succeeded');
    const [order] = await ordersOf(checkout.id);
    expect(order).toMatchObject({ status: 'paid', total_amount: 1500, billing_reason: 'purchase', customer: { email } });
    expect(body).toContain(order.invoice_number ?? order.id);

    // A reload of the checkout link leads to the confirmation, not to a second payment.
    await page.goto(checkout.url);
    expect(new URL(page.url()).pathname).toBe(`/checkout/${checkout.client_secret}/confirmation`);
  });

  it('starts a subscription for a recurring product', async () => {
    const checkout = await newCheckout(catalog.monthly);
    const page = await context.newPage();
    await page.goto(checkout.url);
    expect(await page.getByTestId('price').textContent()).toBe('$10.00 / month');
    await fillContact(page, `sub-${Date.now()}@example.com`);
    await chooseCountry(page);
    await fillCard(page, GOOD_CARD);
    await submit(page, 'Subscribe for $10.00');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    expect(await page.getByRole('status').first().textContent()).toContain('Your subscription to Lantern Cloud is active.');
    const done = await checkoutNow(checkout.id);
    expect(done.status).toBe('succeeded');
    expect(done.subscription_id).toEqual(expect.any(String));
    const [order] = await ordersOf(checkout.id);
    expect(order).toMatchObject({ billing_reason: 'subscription_create', total_amount: 1000, subscription_id: done.subscription_id });
  });

  it('starts a free trial: the card is saved, nothing is due today', async () => {
    const trialProduct = await product({
      name: 'Lantern Trial',
      recurring_interval: 'month',
      trial_interval: 'day',
      trial_interval_count: 14,
      prices: [{ amount_type: 'fixed', price_amount: 1000, price_currency: 'usd' }],
    });
    const checkout = await newCheckout(trialProduct);
    const page = await context.newPage();
    await page.goto(checkout.url);
    expect(await page.locator('.summary').textContent()).toContain('Free for 14 days, then billed $10.00 / month.');
    expect(await amountCell(page, 'due')).toBe('$0.00');
    await fillContact(page, `trial-${Date.now()}@example.com`);
    await chooseCountry(page);
    await fillCard(page, GOOD_CARD);
    await submit(page, 'Start trial');
    expect(await page.getByRole('status').first().textContent()).toMatch(/Your free trial of Lantern Trial has started\. The first payment is due on \d{4}-\d{2}-\d{2}\./);
    const [order] = await ordersOf(checkout.id);
    expect(order).toMatchObject({ total_amount: 0, subscription: { status: 'trialing' } });
  });

  it('refuses a mistyped card beside its field, shows the processor\'s message for a declined one, keeps the details, and takes another card', async () => {
    const checkout = await newCheckout(catalog.oneTime);
    const page = await context.newPage();
    await page.goto(checkout.url);
    const email = `declined-${Date.now()}@example.com`;
    await fillContact(page, email, 'Dee Clined');
    await chooseCountry(page);
    // A mistyped number (Luhn) is refused beside the card field before anything is charged.
    await fillCard(page, '4242 4242 4242 4241');
    expect((await submit(page, 'Pay $15.00'))?.status()).toBe(400);
    expect(await page.getByLabel('Card number').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#field-card_number-error').textContent()).toContain('Your card number is invalid.');

    await fillCard(page, DECLINED_CARD);
    const declined = await submit(page, 'Pay $15.00');
    expect(declined?.status()).toBe(402);
    expect(await page.getByRole('alert').textContent()).toBe('Your card was declined. Try another card.');
    expect(await page.getByLabel('Email address').inputValue()).toBe(email);
    expect(await page.getByLabel('Name (optional)').inputValue()).toBe('Dee Clined');
    expect(await page.getByLabel('Card number').inputValue()).toBe('');
    expect(await page.content()).not.toContain('4000000000000002');
    expect((await checkoutNow(checkout.id)).status).toBe('open');
    expect(await ordersOf(checkout.id)).toEqual([]);

    await fillCard(page, GOOD_CARD);
    await submit(page, 'Pay $15.00');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    expect((await checkoutNow(checkout.id)).status).toBe('succeeded');
  });

  it('applies a discount code, shows the discount and the new total, removes it, and charges the discounted total', async () => {
    const checkout = await newCheckout(catalog.oneTime);
    const page = await context.newPage();
    await page.goto(checkout.url);
    await page.getByLabel('Discount code').fill('NOT-A-CODE');
    const unknown = await submit(page, 'Apply');
    expect(unknown?.status()).toBe(400);
    expect(await page.locator('#field-discount_code-error').textContent()).toBeTruthy();
    expect(await page.getByLabel('Discount code').inputValue()).toBe('NOT-A-CODE');

    await page.getByLabel('Discount code').fill(catalog.discountCode.toLowerCase());
    await submit(page, 'Apply');
    expect(new URL(page.url()).search).toBe('?notice=discount-applied');
    expect(await page.getByTestId('discount-applied').textContent()).toContain('25% off');
    expect(await amountCell(page, 'discount')).toBe('−$3.75');
    expect(await amountCell(page, 'total')).toBe('$11.25');

    await submit(page, 'Remove discount');
    expect(await amountCell(page, 'total')).toBe('$15.00');
    expect(await page.getByTestId('discount-applied').count()).toBe(0);

    await page.getByLabel('Discount code').fill(catalog.discountCode);
    await submit(page, 'Apply');
    await fillContact(page, `deal-${Date.now()}@example.com`);
    await chooseCountry(page);
    await fillCard(page, GOOD_CARD);
    await submit(page, 'Pay $11.25');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    const [order] = await ordersOf(checkout.id);
    expect(order).toMatchObject({ subtotal_amount: 1500, discount_amount: 375, total_amount: 1125 });
  });

  it('gives a free product without a card form', async () => {
    const checkout = await newCheckout(catalog.free);
    const page = await context.newPage();
    await page.goto(checkout.url);
    expect(await page.getByTestId('price').textContent()).toBe('Free');
    expect(await page.getByLabel('Card number').count()).toBe(0);
    await fillContact(page, `free-${Date.now()}@example.com`);
    await chooseCountry(page);
    await submit(page, 'Get it free');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    expect(await page.getByTestId('license-key').textContent()).toMatch(/^LANTERN/);
    const [order] = await ordersOf(checkout.id);
    expect(order).toMatchObject({ status: 'paid', total_amount: 0 });
  });

  it('shows custom field errors beside their inputs, keeps what was typed, and saves the fields once fixed', async () => {
    const checkout = await newCheckout(catalog.withFields);
    const page = await context.newPage();
    await page.goto(checkout.url);
    const email = `fields-${Date.now()}@example.com`;
    await fillContact(page, email);
    await chooseCountry(page);
    await page.getByLabel('Company name').fill('AB');
    await page.getByLabel('Number of seats').fill('11');
    await fillCard(page, GOOD_CARD);
    const refused = await submit(page, 'Pay $49.00');
    expect(refused?.status()).toBe(400);
    expect(await page.locator('#field-cf_company-error').textContent()).toContain('at least 3 characters');
    expect(await page.locator('#field-cf_seats-error').textContent()).toContain('10 or less');
    expect(await page.locator('#field-cf_terms-error').textContent()).toContain('I accept the terms');
    expect(await page.getByLabel('Company name').getAttribute('aria-invalid')).toBe('true');
    // The summary above the form links every error to its input.
    expect(await page.locator('#form-error a').evaluateAll((links) => links.map((link) => link.getAttribute('href')))).toEqual(['#field-cf_company', '#field-cf_seats', '#field-cf_terms']);
    expect(await page.getByLabel('Company name').inputValue()).toBe('AB');
    expect(await page.getByLabel('Number of seats').inputValue()).toBe('11');
    expect(await page.getByLabel('Email address').inputValue()).toBe(email);
    expect(await page.getByLabel('Card number').inputValue()).toBe('');
    expect((await checkoutNow(checkout.id)).status).toBe('open');

    await page.getByLabel('Company name').fill('Acme Lighting');
    await page.getByLabel('Number of seats').fill('4');
    await page.getByLabel('I accept the terms').check();
    await fillCard(page, GOOD_CARD);
    await submit(page, 'Pay $49.00');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    const [order] = await ordersOf(checkout.id);
    expect(order.custom_field_data).toEqual({ company: 'Acme Lighting', seats: 4, terms: true });
  });

  it('buys for a business: asks for the business name and the full address, and puts them on the order', async () => {
    const checkout = await newCheckout(catalog.oneTime);
    const page = await context.newPage();
    await page.goto(checkout.url);
    expect(await page.getByLabel('Business name').isVisible()).toBe(false);
    await page.getByLabel("I'm buying for a business").check();
    expect(await page.getByLabel('Business name').isVisible()).toBe(true);
    await fillContact(page, `business-${Date.now()}@example.com`);
    await chooseCountry(page, 'FR');
    await fillCard(page, GOOD_CARD);
    expect((await submit(page, 'Pay $15.00'))?.status()).toBe(400);
    expect(await page.locator('#field-customer_billing_name-error').textContent()).toContain('Enter the business name');

    await page.getByLabel('Business name').fill('Lumière SARL');
    await page.getByLabel('Tax ID (optional)').fill('FR61954506077');
    await fillCard(page, GOOD_CARD);
    // Buying as a business needs the full address, which the form now asks for.
    expect((await submit(page, 'Pay $15.00'))?.status()).toBe(400);
    expect(await page.getByLabel('Address line 1').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Address line 1').fill('1 rue de la Paix');
    await page.getByLabel('City').fill('Paris');
    await page.getByLabel('Postal code').fill('75002');
    await fillCard(page, GOOD_CARD);
    await submit(page, 'Pay $15.00');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    const [order] = await ordersOf(checkout.id);
    expect(order).toMatchObject({ billing_name: 'Lumière SARL', billing_address: { line1: '1 rue de la Paix', city: 'Paris', postal_code: '75002', country: 'FR' } });
  });

  it('takes a pay-what-you-want amount within its bounds and asks again when the total changed', async () => {
    const checkout = await newCheckout(catalog.payWhatYouWant);
    const page = await context.newPage();
    await page.goto(checkout.url);
    expect(await page.getByTestId('price').textContent()).toBe('Pay what you want (from $5.00)');
    expect(await page.getByLabel('Amount (USD)').inputValue()).toBe('10.00');
    await fillContact(page, `tip-${Date.now()}@example.com`);
    await chooseCountry(page);
    await page.getByLabel('Amount (USD)').fill('2');
    await fillCard(page, GOOD_CARD);
    expect((await submit(page, 'Pay $10.00'))?.status()).toBe(400);
    expect(await page.locator('#field-amount-error').textContent()).toContain('Pay at least $5.00.');

    await page.getByLabel('Amount (USD)').fill('12.50');
    await fillCard(page, GOOD_CARD);
    // The total shown was $10.00: nothing is charged for an amount the customer has not seen as the total.
    expect((await submit(page, 'Pay $10.00'))?.status()).toBe(409);
    expect(await page.getByRole('status').textContent()).toBe('The total is now $12.50. Check it, then pay again.');
    expect(await ordersOf(checkout.id)).toEqual([]);
    await fillCard(page, GOOD_CARD);
    await submit(page, 'Pay $12.50');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    const [order] = await ordersOf(checkout.id);
    expect(order.total_amount).toBe(1250);
  });

  it('works with JavaScript disabled: discount, declined card, payment and the success URL', async () => {
    const success = 'https://shop.example/thanks?checkout={CHECKOUT_ID}';
    const checkout = await newCheckout(catalog.oneTime, { success_url: success });
    const noScript = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await noScript.newPage();
      await page.goto(checkout.url);
      await page.getByLabel('Discount code').fill(catalog.discountCode);
      await submit(page, 'Apply');
      expect(await amountCell(page, 'total')).toBe('$11.25');
      await fillContact(page, `nojs-${Date.now()}@example.com`);
      await chooseCountry(page);
      await fillCard(page, DECLINED_CARD);
      expect((await submit(page, 'Pay $11.25'))?.status()).toBe(402);
      await fillCard(page, GOOD_CARD);
      await submit(page, 'Pay $11.25');
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
      const link = page.getByRole('link', { name: 'Continue now' });
      expect(await link.getAttribute('href')).toBe(`https://shop.example/thanks?checkout=${checkout.id}`);
      expect(await page.locator('meta[http-equiv="refresh"]').getAttribute('content')).toBe(`5; url=https://shop.example/thanks?checkout=${checkout.id}`);
    } finally {
      await noScript.close();
    }
  });

  it('lets the customer choose among the checkout\'s products and shows the new total before charging', async () => {
    const checkout = await newCheckout(catalog.oneTime, { products: [catalog.oneTime, catalog.monthly] });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(checkout.url);
    expect(await page.getByLabel('Lantern Pro').isChecked()).toBe(true);
    await page.getByLabel('Lantern Cloud').check();
    await submit(page, 'Update total');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Lantern Cloud');
    expect(await amountCell(page, 'total')).toBe('$10.00 / month');
    await fillContact(page, `choice-${Date.now()}@example.com`);
    await chooseCountry(page);
    await fillCard(page, GOOD_CARD);
    await submit(page, 'Subscribe for $10.00');
    expect(await page.getByRole('status').first().textContent()).toContain('Your subscription to Lantern Cloud is active.');
    expect((await checkoutNow(checkout.id)).product_id).toBe(catalog.monthly);
    // The page is styled by the daemon's own stylesheets only, inside helmet's CSP.
    expect(violations).toEqual([]);
  });

  it('shows a clear page once the checkout has expired, also to a form that was already open', async () => {
    const seller = await createOrganization(owner, 'Sandbox Seller');
    await v1('PATCH', `/organizations/${seller}/clock`, { sandbox: true });
    const productId = await v1<{ id: string }>('POST', '/products/', { organization_id: seller, name: 'Short Offer', prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] });
    const checkout = await newCheckout(productId.id);
    const page = await context.newPage();
    await page.goto(checkout.url);
    expect(await page.getByTestId('price').textContent()).toBe('$9.00');
    await v1('POST', `/organizations/${seller}/clock/advance`, { by: '+25h' });

    await fillContact(page, `late-${Date.now()}@example.com`);
    await chooseCountry(page);
    await fillCard(page, GOOD_CARD);
    const late = await submit(page, 'Pay $9.00');
    expect(late?.status()).toBe(410);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This checkout has expired');
    expect(await page.getByRole('alert').textContent()).toContain('Nothing was charged.');
    expect((await page.goto(checkout.url))?.status()).toBe(410);
    expect(await ordersOfIn(seller, checkout.id)).toEqual([]);
  });

  it('shows a clear page for an unknown checkout link', async () => {
    const page = await context.newPage();
    const response = await page.goto(`${daemon.url}/checkout/polar_c_doesnotexist`);
    expect(response?.status()).toBe(404);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Checkout not found');
  });
});

describe('the checkout form over plain HTTP', () => {
  let evil: Server;
  let evilUrl: string;

  beforeAll(async () => {
    evil = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!DOCTYPE html><p>evil</p>');
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => evil.close(() => resolve())));

  it('refuses a payment posted from another site with 403 and charges nothing', async () => {
    const checkout = await newCheckout(catalog.oneTime);
    const res = await postForm(
      daemon.url,
      `/checkout/${checkout.client_secret}`,
      { intent: 'pay', expected_total: '1500', customer_email: 'x@example.com', address_country: 'DE', card_number: '4242424242424242', card_expiry: '12/34', card_cvc: '123' },
      { origin: evilUrl },
    );
    expect(res.status).toBe(403);
    expect((await checkoutNow(checkout.id)).status).toBe('open');
  });

  it('pays with a plain form post and redirects to the confirmation (303)', async () => {
    const checkout = await newCheckout(catalog.oneTime);
    const res = await postForm(daemon.url, `/checkout/${checkout.client_secret}`, {
      intent: 'pay',
      expected_total: '1500',
      customer_email: `curl-${Date.now()}@example.com`,
      address_country: 'DE',
      card_number: '4242424242424242',
      card_expiry: '12/34',
      card_cvc: '123',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/checkout/${checkout.client_secret}/confirmation`);
    expect((await checkoutNow(checkout.id)).status).toBe('succeeded');
    expect(JSON.stringify(daemon.logs)).not.toContain('4242424242424242');
  });

  it('may be framed by the checkout\'s embed origin only', async () => {
    const plain = await newCheckout(catalog.oneTime);
    const plainPage = await fetch(plain.url);
    expect(plainPage.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");
    expect(plainPage.headers.get('x-frame-options')).toBe('SAMEORIGIN');

    const embedded = await newCheckout(catalog.oneTime, { embed_origin: 'https://shop.example' });
    const embeddedPage = await fetch(embedded.url);
    expect(embeddedPage.headers.get('content-security-policy')).toContain("frame-ancestors 'self' https://shop.example;");
    expect(embeddedPage.headers.get('x-frame-options')).toBeNull();
  });
});

describe('discounts that do not last, or do not apply, on the hosted checkout in Chromium', () => {
  const discount = (body: Record<string, unknown>) => {
    const code = `D${Math.random().toString(36).slice(2, 8).toUpperCase()}`;
    return v1('POST', '/discounts/', { organization_id: organizationId, name: `Test ${code}`, code, ...body }).then(() => code);
  };

  it('shows what a one-time discount on a subscription charges today and what each renewal costs', async () => {
    const code = await discount({ type: 'percentage', basis_points: 2500, duration: 'once' });
    const checkout = await newCheckout(catalog.monthly);
    const page = await context.newPage();
    await page.goto(checkout.url);
    await page.getByLabel('Discount code').fill(code);
    await submit(page, 'Apply');
    expect(await page.locator('.summary tr.total th').textContent()).toBe('Due today');
    expect(await amountCell(page, 'total')).toBe('$7.50');
    expect(await amountCell(page, 'renewal')).toBe('$10.00 / month');
    await fillContact(page, `once-${Date.now()}@example.com`);
    await chooseCountry(page);
    await fillCard(page, GOOD_CARD);
    await submit(page, 'Subscribe, pay $7.50 today');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    const [order] = await ordersOf(checkout.id);
    expect(order).toMatchObject({ billing_reason: 'subscription_create', discount_amount: 250, total_amount: 750 });
  });

  it('shows how long a repeating discount lasts and what renewals cost after it', async () => {
    const code = await discount({ type: 'percentage', basis_points: 5000, duration: 'repeating', duration_in_months: 3 });
    const checkout = await newCheckout(catalog.monthly);
    const page = await context.newPage();
    await page.goto(checkout.url);
    await page.getByLabel('Discount code').fill(code);
    await submit(page, 'Apply');
    expect(await amountCell(page, 'total')).toBe('$5.00');
    expect(await amountCell(page, 'renewal')).toBe('$5.00 / month until 3 months after you subscribe, then $10.00 / month');
    expect(await page.getByRole('button', { name: 'Subscribe, pay $5.00 today' }).count()).toBe(1);
  });

  it('keeps "Subscribe for" the total when the discount lasts forever', async () => {
    const code = await discount({ type: 'percentage', basis_points: 1000, duration: 'forever' });
    const checkout = await newCheckout(catalog.monthly);
    const page = await context.newPage();
    await page.goto(checkout.url);
    await page.getByLabel('Discount code').fill(code);
    await submit(page, 'Apply');
    expect(await amountCell(page, 'total')).toBe('$9.00 / month');
    expect(await page.locator('.summary [data-amount="renewal"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Subscribe for $9.00' }).count()).toBe(1);
  });

  it('refuses a code that does not apply to the product beside its field, and the next press pays without it', async () => {
    const code = await discount({ type: 'percentage', basis_points: 5000, duration: 'once', products: [catalog.oneTime] });
    const checkout = await newCheckout(catalog.payWhatYouWant);
    const page = await context.newPage();
    await page.goto(checkout.url);
    await fillContact(page, `wrong-code-${Date.now()}@example.com`);
    await chooseCountry(page);
    await fillCard(page, GOOD_CARD);
    await page.getByLabel('Discount code').fill(code);
    const refused = await submit(page, 'Pay $10.00');
    expect(refused?.status()).toBe(400);
    expect(await page.locator('#field-discount_code-error').textContent()).toContain(`“${code}” was not applied`);
    expect(await page.locator('#field-discount_code-error').textContent()).toContain('You can pay without it');
    expect(await page.getByLabel('Discount code').inputValue()).toBe('');
    expect(await ordersOf(checkout.id)).toHaveLength(0);

    await fillCard(page, GOOD_CARD);
    await submit(page, 'Pay $10.00');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
    const [order] = await ordersOf(checkout.id);
    expect(order).toMatchObject({ discount_amount: 0, total_amount: 1000 });
  });

  it('takes off an applied discount that was used up meanwhile, shows the new total, and pays it', async () => {
    const code = await discount({ type: 'fixed', amount: 300, currency: 'usd', duration: 'once', max_redemptions: 1 });
    const mine = await newCheckout(catalog.oneTime);
    const page = await context.newPage();
    await page.goto(mine.url);
    await page.getByLabel('Discount code').fill(code);
    await submit(page, 'Apply');
    expect(await amountCell(page, 'total')).toBe('$12.00');
    // Someone else redeems the last use first.
    const theirs = await newCheckout(catalog.oneTime);
    const paid = await v1Request(daemon.url, undefined, 'POST', `/checkouts/client/${theirs.client_secret}/confirm`, {
      customer_email: `first-${Date.now()}@example.com`,
      customer_billing_address: { country: 'DE' },
      discount_code: code,
      confirmation_token_id: 'tok_visa',
    });
    expect(paid.status).toBe(200);
    await fillContact(page, `late-${Date.now()}@example.com`);
    await chooseCountry(page);
    await fillCard(page, GOOD_CARD);
    const refused = await submit(page, 'Pay $12.00');
    expect(refused?.status()).toBe(400);
    expect(await page.locator('#field-discount_code-error').textContent()).toContain('It was removed, so the total is now $15.00');
    expect(await amountCell(page, 'total')).toBe('$15.00');
    expect(await ordersOf(mine.id)).toHaveLength(0);
    await fillCard(page, GOOD_CARD);
    await submit(page, 'Pay $15.00');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your purchase');
  });
});
