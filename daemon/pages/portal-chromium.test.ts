import type { Polar } from '@polar-sh/sdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGitHub, type FakeGitHub } from '../../core/integrations/fake-github.js';
import { listOutboxMail } from '../../core/mail/mailer.js';
import { launchBrowser } from '../testing/browser.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { uploadDownloadable } from '../testing/benefit-grants.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { submit } from './testing.js';

let daemon: TestDaemon;
let github: FakeGitHub;
let browser: Browser;
let receiver: Receiver;
let owner: SignedIn;
let seller: Polar;
let organizationId: string;
let slug: string;
let productId: string;
let maxId: string;
const MANUAL = 'The Lantern manual, chapter one.';

/** The events a subscriber of the portal's changes hears, as Polar sends them. */
const EVENTS = [
  'order.created', 'order.paid', 'subscription.created', 'subscription.active', 'subscription.updated', 'subscription.canceled', 'subscription.uncanceled',
  'benefit_grant.created', 'benefit_grant.updated', 'customer.updated', 'customer.state_changed',
];

beforeAll(async () => {
  github = await startFakeGitHub();
  github.addRepository('lantern-software', 'source');
  [daemon, browser, receiver] = await Promise.all([
    startTestDaemon({ TILL_WEBHOOKS_ALLOW_PRIVATE: '1', TILL_WEBHOOKS_RETRY_BASE_MS: '1', TILL_WEBHOOKS_POLL_MS: '20', ...github.env }),
    launchBrowser(),
    startReceiver(),
  ]);
  owner = await signUp(daemon.url, { name: 'Paula Portal' });
  organizationId = await createOrganization(owner, 'Lantern Software');
  seller = polarSdk(daemon.url, owner.token);
  slug = (await seller.organizations.get({ id: organizationId })).slug;
  const endpoint = await v1Request(daemon.url, owner.token, 'POST', '/webhooks/endpoints', { url: `${receiver.url}/hooks`, format: 'raw', events: EVENTS, organization_id: organizationId });
  expect(endpoint.status).toBe(201);
  const fileId = await uploadDownloadable(daemon, owner.token, organizationId, Buffer.from(MANUAL), 'lantern-manual.pdf');
  const keys = await seller.benefits.create({ organizationId, type: 'license_keys', description: 'Lantern licence', properties: { prefix: 'LANTERN' } } as never);
  const files = await seller.benefits.create({ organizationId, type: 'downloadables', description: 'Lantern manual', properties: { files: [fileId] } } as never);
  const product = await seller.products.create({ organizationId, name: 'Lantern Cloud', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1200 }] } as never);
  const source = await seller.benefits.create({
    organizationId, type: 'github_repository', description: 'Lantern source', properties: { repositoryOwner: 'lantern-software', repositoryName: 'source', permission: 'pull' },
  } as never);
  await seller.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [keys.id, files.id, source.id] } });
  productId = product.id;
  maxId = (await seller.products.create({ organizationId, name: 'Lantern Max', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 2400 }] } as never)).id;
});
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await daemon?.close();
  await github?.close();
});

/** A customer who bought the monthly product through the sandbox checkout. */
async function buy(email: string) {
  const checkout = await seller.checkouts.create({ products: [productId], customerEmail: email });
  await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
  const done = await seller.checkouts.get({ id: checkout.id });
  expect(done.status).toBe('succeeded');
  const [key] = (await seller.licenseKeys.list({ organizationId })).result.items.filter((k) => k.customerId === done.customerId);
  return { customerId: done.customerId!, subscriptionId: done.subscriptionId!, licenseKey: key!.key };
}

type Hook = { type: string; data: { id: string; subscription_id?: string; customer_id?: string; benefit?: { type?: string } } };
const hooks = () => receiver.received.map((r) => JSON.parse(r.body) as Hook);
/** The customer.* webhooks delivered about this customer, in order. */
const customerHooksOf = (customerId: string) => hooks().filter((e) => e.type.startsWith('customer.') && e.data.id === customerId).map((e) => e.type);

/** The webhooks delivered for this subscription, in order. */
const hooksOf = (subscriptionId: string) =>
  receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: { id: string; subscription_id?: string } }).filter((e) => e.data.id === subscriptionId || e.data.subscription_id === subscriptionId).map((e) => e.type);

async function noHorizontalOverflow(page: Page) {
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
}

/**
 * The code of the newest sign-in mail to `email`, from the local mail outbox. Not simply the newest mail: the
 * purchase's receipt is mailed by a background pass and, on a busy machine, after the code.
 */
async function mailedCode(email: string): Promise<string> {
  let code: string | undefined;
  await expect.poll(async () => {
    const mails = await listOutboxMail(daemon.db, { to: email, limit: 20 });
    code = mails.map((mail) => /sign-in code: (\d{6})/.exec(mail.subject)?.[1]).find(Boolean);
    return code;
  }).toMatch(/^\d{6}$/);
  return code!;
}

const VIEWPORTS = [
  { name: 'a desktop', viewport: { width: 1280, height: 900 } },
  { name: 'a phone', viewport: { width: 375, height: 812 } },
];

describe('the customer portal in Chromium', () => {
  for (const { name, viewport } of VIEWPORTS) {
    // A whole customer's visit on a machine that may be busy: generous, and nothing in it waits on time.
    it(`signs in by a mailed code, shows orders, downloads a file, copies the license key, changes plan, updates the card, cancels with a reason and uncancels, connects GitHub, at ${name}'s width`, async () => {
      const email = `ada-${viewport.width}-${Date.now()}@example.com`;
      const bought = await buy(email);
      await receiver.waitFor(() => hooksOf(bought.subscriptionId).includes('subscription.active'));

      const context = await browser.newContext({ viewport, acceptDownloads: true, permissions: ['clipboard-read', 'clipboard-write'] });
      const page = await context.newPage();
      await page.goto(`${daemon.url}/portal/${slug}`);
      expect(await page.title()).toBe('Sign in · Lantern Software');
      await noHorizontalOverflow(page);
      await page.getByLabel('Email address').fill(email.toUpperCase());
      await submit(page, 'Email me a code');
      expect(await page.getByRole('status').first().textContent()).toContain('a 6-digit code is on its way');
      await page.getByLabel('Code from the email').fill(await mailedCode(email));
      await submit(page, 'Sign in');
      expect(new URL(page.url()).pathname).toBe(`/portal/${slug}`);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your account');
      await noHorizontalOverflow(page);

      // The subscription with its next charge, and the order with its receipt.
      const subscription = page.getByTestId('subscription');
      expect(await subscription.textContent()).toContain('Lantern Cloud');
      expect(await page.getByTestId('next-charge').textContent()).toMatch(/^Next charge: \$12\.00 on \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
      const order = page.getByTestId('order');
      expect(await order.count()).toBe(1);
      expect(await order.textContent()).toContain('$12.00');
      const receipt = await page.request.get(await order.getByRole('link', { name: 'Receipt (PDF)' }).getAttribute('href') as string);
      expect(receipt.status()).toBe(200);
      expect(receipt.headers()['content-type']).toBe('application/pdf');
      expect((await receipt.body()).subarray(0, 5).toString()).toBe('%PDF-');

      // The download link gives the file's bytes.
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download').getByRole('link', { name: 'lantern-manual.pdf' }).click()]);
      expect(download.suggestedFilename()).toBe('lantern-manual.pdf');
      const stream = await download.createReadStream();
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).toString()).toBe(MANUAL);

      // The license key is copied to the clipboard.
      const keyCard = page.getByTestId('license-key');
      expect(await keyCard.getByRole('textbox', { name: 'License key' }).inputValue()).toBe(bought.licenseKey);
      await keyCard.getByRole('button', { name: 'Copy' }).click();
      await expect.poll(() => keyCard.getByRole('status').textContent()).toBe('Copied.');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(bought.licenseKey);

      // Change plan: the prorated amount is shown before anything changes, then confirmed (subscription.updated).
      await Promise.all([page.waitForNavigation(), subscription.getByRole('link', { name: 'Change plan' }).click()]);
      await noHorizontalOverflow(page);
      await page.getByLabel(/Lantern Max, \$24\.00/).check();
      await submit(page, 'Review the change');
      expect(await page.getByTestId('plan-preview').textContent()).toMatch(/Nothing is charged now: \$\d+\.\d\d is added to your next charge on \d{4}-\d\d-\d\d/);
      expect((await seller.subscriptions.get({ id: bought.subscriptionId })).productId).toBe(productId);
      await noHorizontalOverflow(page);
      await submit(page, 'Confirm: move to Lantern Max');
      expect(await page.getByRole('status').first().textContent()).toContain('Your plan is changed.');
      expect(await seller.subscriptions.get({ id: bought.subscriptionId })).toMatchObject({ productId: maxId, amount: 2400 });
      await receiver.waitFor(() => hooksOf(bought.subscriptionId).includes('subscription.updated'));

      // Update the card: the new one is the subscription's (customer.updated, customer.state_changed, as Polar on a new default).
      const customerHooksBefore = customerHooksOf(bought.customerId).length;
      await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Update your card' }).click()]);
      expect(await page.getByTestId('saved-card').textContent()).toContain('Visa ending in 4242');
      await noHorizontalOverflow(page);
      await page.getByLabel('Card number').fill('5555 5555 5555 4444');
      await page.getByLabel('Expiry (MM / YY)').fill('12 / 34');
      await page.getByLabel('Security code').fill('123');
      await submit(page, 'Save card');
      expect(await page.getByRole('status').first().textContent()).toContain('Your card is saved');
      expect(await page.getByTestId('saved-card').first().textContent()).toContain('Mastercard ending in 4444');
      const [newCard] = (await daemon.db('payment_methods').where({ customer_id: bought.customerId }).orderBy('created_at', 'desc')) as { id: string }[];
      expect((await daemon.db('subscriptions').where({ id: bought.subscriptionId }).first()).payment_method_id).toBe(newCard!.id);
      await receiver.waitFor(() => customerHooksOf(bought.customerId).slice(customerHooksBefore).includes('customer.updated'));
      expect(customerHooksOf(bought.customerId).slice(customerHooksBefore)).toContain('customer.state_changed');
      await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Back to your account' }).click()]);

      // Cancel with a reason and a comment: still active until the period ends.
      await Promise.all([page.waitForNavigation(), subscription.getByRole('link', { name: 'Cancel subscription' }).click()]);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Cancel Lantern Max');
      await noHorizontalOverflow(page);
      await page.getByLabel('Too expensive').check();
      await page.getByLabel(/Anything else to tell/).fill('Back next year.');
      await submit(page, 'Cancel subscription');
      expect(await page.getByRole('status').first().textContent()).toContain('Your subscription is canceled');
      expect(await page.getByTestId('subscription-ends').textContent()).toMatch(/^Canceled: it ends on \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
      const canceled = await seller.subscriptions.get({ id: bought.subscriptionId });
      expect(canceled).toMatchObject({ status: 'active', cancelAtPeriodEnd: true, customerCancellationReason: 'too_expensive', customerCancellationComment: 'Back next year.' });
      await receiver.waitFor(() => hooksOf(bought.subscriptionId).includes('subscription.canceled'));

      // Uncancel.
      await submit(page, 'Keep my subscription');
      expect(await page.getByRole('status').first().textContent()).toContain('Your subscription continues');
      expect(await page.getByTestId('next-charge').isVisible()).toBe(true);
      expect(await seller.subscriptions.get({ id: bought.subscriptionId })).toMatchObject({ cancelAtPeriodEnd: false, customerCancellationReason: null });
      await receiver.waitFor(() => hooksOf(bought.subscriptionId).includes('subscription.uncanceled'));
      const subscriptionHooks = hooksOf(bought.subscriptionId).filter((type) => type.startsWith('subscription.'));
      expect(subscriptionHooks.slice(subscriptionHooks.indexOf('subscription.active') + 1)).toEqual([
        'subscription.updated', // the change of plan
        'subscription.updated', 'subscription.canceled',
        'subscription.updated', 'subscription.uncanceled',
      ]);
      await noHorizontalOverflow(page);

      // Connect GitHub for the repository benefit (a local fake of GitHub's OAuth and API): the account is invited,
      // and the grant announces the connection and the access (benefit_grant.updated).
      const login = `ada-${viewport.width}`;
      github.signIn({ id: 9000 + viewport.width, login });
      await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Connect your GitHub account' }).click()]);
      expect(page.url()).toBe(`${daemon.url}/portal/${slug}?connected=github`);
      await expect.poll(() => github.invitations('lantern-software', 'source').some((invitation) => invitation.login === login), { timeout: 30_000 }).toBe(true);
      // The invitation is sent before the grant's own row is written: wait for the grant to read as granted.
      const grantedRepository = async () =>
        (await seller.benefitGrants.list({ customerId: bought.customerId, isGranted: true, limit: 100 })).result.items.find((g) => g.benefit.type === 'github_repository');
      await expect.poll(grantedRepository).toBeDefined();
      const grant = await grantedRepository();
      await receiver.waitFor(() => hooks().some((e) => e.type === 'benefit_grant.updated' && e.data.id === grant!.id));
      expect(await seller.customers.get({ id: bought.customerId })).toMatchObject({ id: bought.customerId });
      await page.reload();
      await page.getByTestId('benefit').filter({ hasText: 'Lantern source' }).getByText('Granted').waitFor();

      // Signing out ends the session: the overview asks for an email again.
      await submit(page, 'Sign out');
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      await context.close();
    }, 240_000);
  }

  it('signs in from the portal link of a customer session and leaves no token in the address bar', async () => {
    const email = `link-${Date.now()}@example.com`;
    const bought = await buy(email);
    const session = await seller.customerSessions.create({ customerId: bought.customerId, returnUrl: 'https://shop.example/account' });
    const context = await browser.newContext({ viewport: { width: 375, height: 812 } });
    const page = await context.newPage();
    await page.goto(session.customerPortalUrl);
    expect(page.url()).toBe(`${daemon.url}/portal/${slug}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your account');
    expect(await page.getByRole('link', { name: 'Back to Lantern Software' }).getAttribute('href')).toBe('https://shop.example/account');
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'till_portal', path: `/portal/${slug}`, httpOnly: true, sameSite: 'Lax' });
    expect(cookie!.value).toMatch(/^till_cst_/);
    expect(cookie!.value).not.toBe(session.token);
    await noHorizontalOverflow(page);
    await context.close();
  }, 120_000);
});
