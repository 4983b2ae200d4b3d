import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../testing/browser.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { eventually } from '../testing/stripe.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';
import { submit } from './testing.js';

/**
 * The pay-link page in Chromium (JavaScript off, as the sandbox's card form needs none): a customer whose renewal was
 * declined opens the link from the mail and pays, directly or through the sandbox's 3-D Secure page.
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

/** A subscription whose renewal was just declined, and the link mailed to its customer. */
async function declinedRenewal(email: string): Promise<{ subscriptionId: string; url: string }> {
  const sdk = polarSdk(daemon.url, owner.token);
  const checkout = await sdk.checkouts.create({ products: [productId], customerEmail: email });
  await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_chargeCustomerFail', customerBillingAddress: { country: 'US' } } });
  const { subscriptionId } = await sdk.checkouts.get({ id: checkout.id });
  await v1('POST', `/organizations/${organizationId}/clock/advance`, { by: '+1month' });
  // The mail is a job of its own, due with the declined renewal: on PostgreSQL the background runner may take it
  // while the advance answers. Other mails reach the customer too (receipts): the one with the link is waited for.
  const url = await eventually(async () => {
    const mails = await daemon.db('mail_outbox').where({ to_address: email }).orderBy('created_at', 'desc');
    return mails.map((mail) => /(https?:\/\/\S+\/pay\/till_pay_[A-Za-z0-9_-]+)/.exec(String(mail.body))?.[1]).find(Boolean);
  }, `the pay link mailed to ${email}`);
  return { subscriptionId: subscriptionId!, url };
}

async function payWith(page: Page, url: string, card: string) {
  await page.goto(url);
  await page.getByLabel('Card number').fill(card);
  await page.getByLabel('Expiry (MM / YY)').fill('12 / 34');
  await page.getByLabel('Security code').fill('123');
  return submit(page, 'Pay $19.00');
}

const statusOf = async (subscriptionId: string) => (await v1<{ status: string }>('GET', `/subscriptions/${subscriptionId}`)).status;

beforeAll(async () => {
  [daemon, browser] = await Promise.all([startTestDaemon(), launchBrowser()]);
  owner = await signUp(daemon.url, { name: 'Pia Paylink' });
  organizationId = await createOrganization(owner, 'Monthly Goods');
  await v1('PATCH', `/organizations/${organizationId}/clock`, { sandbox: true });
  productId = (await v1<{ id: string }>('POST', '/products/', { organization_id: organizationId, name: 'Goods Club', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 1900, price_currency: 'usd' }] })).id;
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
});
beforeEach(async () => {
  context = await browser.newContext({ javaScriptEnabled: false });
});
afterEach(() => context.close());

describe('the pay-link page in a browser (sandbox, no JavaScript)', { timeout: 120_000 }, () => {
  it('shows the owed renewal with the sandbox test cards, and paying it makes the subscription active again', async () => {
    const { subscriptionId, url } = await declinedRenewal('browser-pays@example.com');
    expect(await statusOf(subscriptionId)).toBe('past_due');
    const page = await context.newPage();
    await page.goto(url);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Pay your Goods Club renewal');
    expect(await page.getByTestId('owed-amount').textContent()).toBe('$19.00');
    expect(await page.getByTestId('mode-badge').textContent()).toBe('Sandbox');
    expect(await page.getByTestId('sandbox-cards').textContent()).toContain('4242 4242 4242 4242');

    await payWith(page, url, '4000 0000 0000 0002');
    expect(await page.getByRole('alert').first().textContent()).toContain('Your payment did not go through: Your card was declined.');
    expect(await statusOf(subscriptionId)).toBe('past_due');

    await payWith(page, url, '4242 4242 4242 4242');
    expect(new URL(page.url()).pathname).toBe(new URL(url).pathname);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your renewal is paid');
    expect(await page.getByRole('status').first().textContent()).toContain('Thank you: your payment of $19.00 went through.');
    expect(await statusOf(subscriptionId)).toBe('active');
  });

  it('goes through the sandbox\'s 3-D Secure page and comes back paid', async () => {
    const { subscriptionId, url } = await declinedRenewal('browser-3ds@example.com');
    const page = await context.newPage();
    await payWith(page, url, '4000 0027 6000 3184');
    expect(new URL(page.url()).pathname).toMatch(/^\/sandbox\/authenticate\//);
    expect(await page.getByTestId('authenticate-amount').textContent()).toContain('$19.00');
    await submit(page, 'Complete authentication');
    expect(new URL(page.url()).pathname).toMatch(/^\/pay\/return\//);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your renewal is paid');
    expect(await statusOf(subscriptionId)).toBe('active');
    // The link itself now says there is nothing left to pay.
    await page.goto(url);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your renewal is paid');
  });
});
