import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Json, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Rita Rules' });
});
afterAll(() => daemon?.close());

const call = (method: string, path: string, body?: unknown) => v1Json(daemon.url, owner.token, method, path, body);
const CARD = { confirmation_token_id: 'tok_visa', customer_billing_address: { country: 'US', state: 'NY' } };

async function shop(name: string, subscriptionSettings: Record<string, unknown>) {
  const organizationId = await createOrganization(owner, name);
  await call('PATCH', `/organizations/${organizationId}`, { subscription_settings: subscriptionSettings });
  const product = (body: Record<string, unknown>) => call('POST', '/products/', { organization_id: organizationId, prices: [{ amount_type: 'fixed', price_amount: 1200, price_currency: 'usd' }], ...body });
  return { organizationId, product };
}

const open = (productId: string, body: Record<string, unknown> = {}) => call('POST', '/checkouts/', { products: [productId], ...body });
const confirm = (clientSecret: string, body: Record<string, unknown> = {}) => v1Request(daemon.url, undefined, 'POST', `/checkouts/client/${clientSecret}/confirm`, { ...CARD, ...body });
const update = (clientSecret: string, body: Record<string, unknown>) => v1Request(daemon.url, undefined, 'PATCH', `/checkouts/client/${clientSecret}`, body);

describe('subscription_settings.allow_multiple_subscriptions off (Polar\'s default)', () => {
  it('refuses a second subscription for the same customer with 403 AlreadyActiveSubscriptionError, and changes nothing', async () => {
    const { organizationId, product } = await shop('Single Sub', { allow_multiple_subscriptions: false });
    const basic = await product({ name: 'Basic', recurring_interval: 'month' });
    const pro = await product({ name: 'Pro', recurring_interval: 'month' });
    const first = await open(basic.id, { customer_email: 'Sam@example.com' });
    expect((await confirm(first.client_secret)).status).toBe(200);

    // By email (any case), at confirm.
    const second = await open(pro.id);
    const refused = await confirm(second.client_secret, { customer_email: 'sam@EXAMPLE.com' });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'AlreadyActiveSubscriptionError', detail: 'You already have an active subscription.' });
    const after = await call('GET', `/checkouts/${second.id}`);
    expect(after).toMatchObject({ status: 'open', customer_email: null });

    // At an update too (the whole update is rolled back), and for a checkout opened for the customer by id.
    expect((await update(second.client_secret, { customer_email: 'sam@example.com' })).status).toBe(403);
    expect((await call('GET', `/checkouts/${second.id}`)).customer_email).toBeNull();
    const [subscription] = (await call('GET', `/subscriptions/?organization_id=${organizationId}`)).items;
    const byId = await open(pro.id, { customer_id: subscription.customer_id });
    expect((await confirm(byId.client_secret)).status).toBe(403);
    expect((await call('GET', `/subscriptions/?organization_id=${organizationId}`)).items).toHaveLength(1);

    // A one-time product is not a subscription; another address is another customer.
    const book = await product({ name: 'Book' });
    expect((await confirm((await open(book.id, { customer_email: 'sam@example.com' })).client_secret)).status).toBe(200);
    expect((await confirm((await open(pro.id, { customer_email: 'tess@example.com' })).client_secret)).status).toBe(200);

    // Once the subscription has ended, subscribing again is allowed.
    await call('DELETE', `/subscriptions/${subscription.id}`);
    expect((await confirm((await open(pro.id, { customer_email: 'sam@example.com' })).client_secret)).status).toBe(200);
  });

  it('lets the same customer hold several subscriptions when the setting is on', async () => {
    const { product } = await shop('Multi Sub', { allow_multiple_subscriptions: true });
    const plan = await product({ name: 'Seat', recurring_interval: 'month' });
    for (let i = 0; i < 2; i++) expect((await confirm((await open(plan.id, { customer_email: 'many@example.com' })).client_secret)).status).toBe(200);
  });
});

describe('subscription_settings.prevent_trial_abuse', () => {
  it('refuses a second trial to the same address (sub-address stripped) with 403 TrialAlreadyRedeemed; paying without the trial goes through', async () => {
    const { organizationId, product } = await shop('No Second Trial', { allow_multiple_subscriptions: true, prevent_trial_abuse: true });
    const plan = await product({ name: 'Trial plan', recurring_interval: 'month', trial_interval: 'day', trial_interval_count: 14 });
    const other = await product({ name: 'Other plan', recurring_interval: 'month', trial_interval: 'week', trial_interval_count: 1 });
    expect((await confirm((await open(plan.id, { customer_email: 'una@example.com' })).client_secret)).status).toBe(200);

    const again = await open(other.id, { customer_email: 'Una+again@example.com' });
    const refused = await confirm(again.client_secret);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'TrialAlreadyRedeemed', detail: 'You have already used a trial for this product. Trials can only be used once per customer.' });
    expect((await call('GET', `/checkouts/${again.id}`)).status).toBe('open');

    const paid = await confirm(again.client_secret, { allow_trial: false });
    expect(paid.status).toBe(200);
    const subscriptions = (await call('GET', `/subscriptions/?organization_id=${organizationId}&sorting=started_at`)).items;
    expect(subscriptions.map((s: { status: string }) => s.status)).toEqual(['trialing', 'active']);
  });

  it('gives a trial again when the setting is off (Polar\'s default)', async () => {
    const { product } = await shop('Trials Galore', { allow_multiple_subscriptions: true });
    const plan = await product({ name: 'Trial plan', recurring_interval: 'month', trial_interval: 'day', trial_interval_count: 7 });
    for (let i = 0; i < 2; i++) expect((await confirm((await open(plan.id, { customer_email: 'vic@example.com' })).client_secret)).status).toBe(200);
  });
});

describe('two checkouts of one customer at the same moment', () => {
  /** Confirms each pair of checkouts at once and answers, for each pair, the statuses sorted. */
  async function confirmPairs(pairs: [string, string][], body: Record<string, unknown> = {}) {
    return Promise.all(pairs.map(async ([a, b]) => (await Promise.all([confirm(a, body), confirm(b, body)])).map((r) => r.status).sort()));
  }

  it('lets one subscription through and refuses the other with 403 when multiple subscriptions are off', async () => {
    const { organizationId, product } = await shop('Race Sub', { allow_multiple_subscriptions: false });
    const basic = await product({ name: 'Basic', recurring_interval: 'month' });
    const pro = await product({ name: 'Pro', recurring_interval: 'month' });
    const pairs: [string, string][] = [];
    for (let i = 0; i < 4; i++) {
      const email = `racer${i}@example.com`;
      pairs.push([(await open(basic.id, { customer_email: email })).client_secret, (await open(pro.id, { customer_email: email })).client_secret]);
    }
    expect(await confirmPairs(pairs)).toEqual(Array(4).fill([200, 403]));
    const subscriptions = (await call('GET', `/subscriptions/?organization_id=${organizationId}&limit=100`)).items;
    expect(subscriptions).toHaveLength(4);
    expect(new Set(subscriptions.map((s: { customer: { email: string } }) => s.customer.email)).size).toBe(4);
  });

  it('gives one trial and refuses the other with 403 when trial abuse is prevented', async () => {
    const { organizationId, product } = await shop('Race Trial', { allow_multiple_subscriptions: true, prevent_trial_abuse: true });
    const plan = await product({ name: 'Trial plan', recurring_interval: 'month', trial_interval: 'day', trial_interval_count: 14 });
    const pairs: [string, string][] = [];
    for (let i = 0; i < 4; i++) {
      pairs.push([(await open(plan.id, { customer_email: `t${i}@example.com` })).client_secret, (await open(plan.id, { customer_email: `t${i}+again@example.com` })).client_secret]);
    }
    expect(await confirmPairs(pairs)).toEqual(Array(4).fill([200, 403]));
    expect((await call('GET', `/subscriptions/?organization_id=${organizationId}&limit=100`)).items).toHaveLength(4);
  });

  it('redeems a discount limited to once a customer only once', async () => {
    const { organizationId, product } = await shop('Race Discount', { allow_multiple_subscriptions: true });
    const book = await product({ name: 'Book' });
    await call('POST', '/discounts/', { organization_id: organizationId, name: 'Once', code: 'RACEONCE', type: 'percentage', basis_points: 5000, duration: 'once', max_redemptions_per_customer: 1 });
    const pairs: [string, string][] = [];
    for (let i = 0; i < 4; i++) {
      const email = `d${i}@example.com`;
      const withCode = async () => {
        const checkout = await open(book.id, { customer_email: email, allow_discount_codes: true });
        expect((await update(checkout.client_secret, { discount_code: 'RACEONCE' })).status).toBe(200);
        return checkout.client_secret as string;
      };
      pairs.push([await withCode(), await withCode()]);
    }
    expect(await confirmPairs(pairs)).toEqual(Array(4).fill([200, 403]));
    const orders = (await call('GET', `/orders/?organization_id=${organizationId}&limit=100`)).items;
    expect(orders.filter((o: { discount_id: string | null }) => o.discount_id !== null)).toHaveLength(4);
  });

  it('counts a checkout still waiting on 3-D Secure as the customer\'s subscription', async () => {
    const { organizationId, product } = await shop('Pending Sub', { allow_multiple_subscriptions: false });
    const basic = await product({ name: 'Basic', recurring_interval: 'month' });
    const pro = await product({ name: 'Pro', recurring_interval: 'month' });
    const waiting = await confirm((await open(basic.id, { customer_email: 'wanda@example.com' })).client_secret, { confirmation_token_id: 'tok_threeDSecure2Required' });
    expect(waiting.status).toBe(200);
    expect((await waiting.json()).status).toBe('confirmed');
    const second = await confirm((await open(pro.id, { customer_email: 'wanda@example.com' })).client_secret);
    expect(second.status).toBe(403);
    expect(await second.json()).toMatchObject({ error: 'AlreadyActiveSubscriptionError', detail: expect.stringContaining('still being confirmed') });
    expect((await call('GET', `/subscriptions/?organization_id=${organizationId}`)).items).toHaveLength(0);
  });
});
