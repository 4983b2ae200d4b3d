import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStripeFake, type StripeFake } from '../core/payments/stripe/fake.js';
import { loadConfig } from './config.js';
import { STRIPE_WEBHOOK_PATH } from './routes/stripe-webhook.js';
import { signUp, type SignedIn } from './testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from './testing/daemon.js';
import { createOrganization, v1Request } from './testing/v1.js';

/** A tilld as production runs it without Stripe (not sandbox-only), and one with live-mode Stripe keys (the fake). */
let bare: TestDaemon;
let live: TestDaemon;
let fake: StripeFake;
let owner: SignedIn;
let liveOwner: SignedIn;

async function call<T = any>(daemon: TestDaemon, who: SignedIn, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await v1Request(daemon.url, who.token, method, path, body);
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

async function checkoutOf(daemon: TestDaemon, who: SignedIn, organizationId: string, price: number) {
  const prices = price > 0 ? [{ amount_type: 'fixed', price_amount: price }] : [{ amount_type: 'free' }];
  const product = await call(daemon, who, 'POST', '/products/', { organization_id: organizationId, name: `Item ${price}`, prices });
  expect(product.status).toBe(201);
  const checkout = await call(daemon, who, 'POST', '/checkouts/', { products: [product.body.id], customer_email: 'buyer@example.com' });
  expect(checkout.status).toBe(201);
  return checkout.body as { id: string; url: string; client_secret: string };
}

const confirm = (daemon: TestDaemon, secret: string, token?: string) =>
  call(daemon, { token: '' } as SignedIn, 'POST', `/checkouts/client/${secret}/confirm`, { ...(token ? { confirmation_token_id: token } : {}), customer_billing_address: { country: 'US' } });

beforeAll(async () => {
  fake = await startStripeFake({ secretKey: 'sk_live_fakeKeyForTheModeTest', publishableKey: 'pk_live_fakeKeyForTheModeTest' });
  [bare, live] = await Promise.all([
    startTestDaemon({ TILL_SANDBOX_ONLY: '0' }),
    startTestDaemon({ TILL_STRIPE_SECRET_KEY: fake.secretKey, TILL_STRIPE_PUBLISHABLE_KEY: fake.publishableKey, TILL_STRIPE_WEBHOOK_SECRET: fake.webhookSecret, TILL_STRIPE_API_BASE: fake.url }),
  ]);
  fake.setWebhookUrl(`${live.url}${STRIPE_WEBHOOK_PATH}`);
  [owner, liveOwner] = await Promise.all([signUp(bare.url, { name: 'Nora Nostripe' }), signUp(live.url, { name: 'Lars Live' })]);
});

afterAll(async () => {
  await Promise.all([bare?.close(), live?.close()]);
  await fake?.close();
});

describe('payment modes: sandbox organizations, Stripe, and organizations that cannot be paid', () => {
  it('refuses a paid checkout of an organization that is neither sandbox nor on Stripe, with a 409 that says what to do', async () => {
    const organizationId = await createOrganization(owner, 'Unpaid Shop');
    expect(await call(bare, owner, 'GET', `/organizations/${organizationId}/payment-mode`)).toMatchObject({ status: 200, body: { organization_id: organizationId, mode: 'not_configured', processor: null } });
    const checkout = await checkoutOf(bare, owner, organizationId, 1500);
    const refused = await confirm(bare, checkout.client_secret, 'tok_visa');
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'PAYMENTS_NOT_CONFIGURED' });
    expect(refused.body.detail ?? refused.body.message ?? JSON.stringify(refused.body)).toMatch(/TILL_STRIPE_SECRET_KEY.*sandbox/s);
    expect((await call(bare, owner, 'GET', `/checkouts/${checkout.id}`)).body.status).toBe('open');
    expect(await bare.db('payments').where({ checkout_id: checkout.id })).toHaveLength(0);
  });

  it('still delivers a free checkout of such an organization', async () => {
    const organizationId = await createOrganization(owner, 'Free Shop');
    const checkout = await checkoutOf(bare, owner, organizationId, 0);
    const confirmed = await confirm(bare, checkout.client_secret);
    expect(confirmed.status).toBe(200);
    expect((await call(bare, owner, 'GET', `/checkouts/${checkout.id}`)).body.status).toBe('succeeded');
  });

  it('takes test payments once the organization is marked sandbox', async () => {
    const organizationId = await createOrganization(owner, 'Turned Sandbox');
    expect((await call(bare, owner, 'PATCH', `/organizations/${organizationId}/clock`, { sandbox: true })).status).toBe(200);
    expect((await call(bare, owner, 'GET', `/organizations/${organizationId}/payment-mode`)).body).toMatchObject({ mode: 'sandbox', processor: 'sandbox' });
    const checkout = await checkoutOf(bare, owner, organizationId, 1500);
    expect((await confirm(bare, checkout.client_secret, 'tok_visa')).status).toBe(200);
    expect((await call(bare, owner, 'GET', `/checkouts/${checkout.id}`)).body.status).toBe('succeeded');
  });

  it('shows on the hosted checkout that the seller cannot be paid, with no card form and no pay button', async () => {
    const organizationId = await createOrganization(owner, 'Page Shop');
    const checkout = await checkoutOf(bare, owner, organizationId, 2500);
    const html = await (await fetch(checkout.url)).text();
    expect(html).toContain('data-testid="payments-not-configured"');
    expect(html).toContain('cannot take payments yet');
    expect(html).not.toContain('name="card_number"');
    expect(html).not.toContain('data-pay');
    expect(html).not.toContain('data-testid="mode-badge"');
    // A post that pays anyway is answered on the page, and nothing is charged.
    const posted = await fetch(checkout.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ intent: 'pay', customer_email: 'buyer@example.com', address_country: 'US', expected_total: '2500' }) });
    expect(posted.status).toBe(409);
    expect(await posted.text()).toContain('cannot take payments yet');
    expect(await bare.db('payments').where({ checkout_id: checkout.id })).toHaveLength(0);
  });

  it('says Stripe live mode by the key, and sandbox for a sandbox organization beside it', async () => {
    const liveOrganization = await createOrganization(liveOwner, 'Live Keys');
    const sandboxOrganization = await createOrganization(liveOwner, 'Sandbox Beside');
    expect((await call(live, liveOwner, 'PATCH', `/organizations/${sandboxOrganization}/clock`, { sandbox: true })).status).toBe(200);
    expect((await call(live, liveOwner, 'GET', `/organizations/${liveOrganization}/payment-mode`)).body).toMatchObject({ mode: 'stripe_live', processor: 'stripe' });
    expect((await call(live, liveOwner, 'GET', `/organizations/${sandboxOrganization}/payment-mode`)).body).toMatchObject({ mode: 'sandbox', processor: 'sandbox' });
    const liveCheckout = await checkoutOf(live, liveOwner, liveOrganization, 900);
    const livePage = await (await fetch(liveCheckout.url)).text();
    expect(livePage).not.toContain('data-testid="mode-badge"');
    expect(livePage).toContain('Your card details go straight to Stripe');
    const sandboxCheckout = await checkoutOf(live, liveOwner, sandboxOrganization, 900);
    expect(await (await fetch(sandboxCheckout.url)).text()).toMatch(/data-testid="mode-badge"[^>]*>Sandbox</);
  });

  it('refuses to start sandbox-only with Stripe keys', () => {
    expect(() => loadConfig({ TILL_SANDBOX_ONLY: '1', TILL_STRIPE_SECRET_KEY: 'sk_test_x', TILL_STRIPE_PUBLISHABLE_KEY: 'pk_test_x', TILL_STRIPE_WEBHOOK_SECRET: 'whsec_x', TILL_SECRET: 'test-secret-test-secret-test-secret-0123', TILL_DATA_DIR: '/tmp' })).toThrow(/TILL_SANDBOX_ONLY and TILL_STRIPE_/);
  });
});
