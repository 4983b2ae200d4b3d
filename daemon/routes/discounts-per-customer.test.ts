import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Json, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Perry Percustomer' });
  organizationId = await createOrganization(owner, 'Once Each');
});
afterAll(() => daemon?.close());

const call = (method: string, path: string, body?: unknown) => v1Json(daemon.url, owner.token, method, path, body);
const CARD = { confirmation_token_id: 'tok_visa', customer_billing_address: { country: 'US', state: 'NY' } };
const confirm = (clientSecret: string, body: Record<string, unknown> = {}) => v1Request(daemon.url, undefined, 'POST', `/checkouts/client/${clientSecret}/confirm`, { ...CARD, ...body });
const update = (clientSecret: string, body: Record<string, unknown>) => v1Request(daemon.url, undefined, 'PATCH', `/checkouts/client/${clientSecret}`, body);
const LIMIT_REACHED = { error: 'DiscountRedemptionLimitReached', detail: 'You have already redeemed this discount the maximum number of times allowed per customer.' };

describe('max_redemptions_per_customer on discounts', () => {
  it('is taken on create and update, answered as given, and refused below 1 with a 422', async () => {
    const created = await call('POST', '/discounts/', { organization_id: organizationId, name: 'Welcome', type: 'percentage', basis_points: 1000, duration: 'once', max_redemptions_per_customer: 2 });
    expect(created.max_redemptions_per_customer).toBe(2);
    expect((await call('GET', `/discounts/${created.id}`)).max_redemptions_per_customer).toBe(2);
    expect((await call('PATCH', `/discounts/${created.id}`, { max_redemptions_per_customer: 1 })).max_redemptions_per_customer).toBe(1);
    expect((await call('PATCH', `/discounts/${created.id}`, { name: 'Welcome back' })).max_redemptions_per_customer).toBe(1);
    expect((await call('PATCH', `/discounts/${created.id}`, { max_redemptions_per_customer: null })).max_redemptions_per_customer).toBeNull();
    const bad = await v1Request(daemon.url, owner.token, 'POST', '/discounts/', { organization_id: organizationId, name: 'Zero', type: 'percentage', basis_points: 1000, duration: 'once', max_redemptions_per_customer: 0 });
    expect(bad.status).toBe(422);
    expect((await bad.json()).detail[0].loc).toContain('max_redemptions_per_customer');
  });

  it('lets each customer redeem a code as often as the limit allows, refusing the next with 403 DiscountRedemptionLimitReached', async () => {
    const book = await call('POST', '/products/', { organization_id: organizationId, name: 'Book', prices: [{ amount_type: 'fixed', price_amount: 2000, price_currency: 'usd' }] });
    await call('POST', '/discounts/', { organization_id: organizationId, name: 'Once', code: 'ONCEEACH', type: 'percentage', basis_points: 5000, duration: 'once', max_redemptions_per_customer: 1 });
    const open = () => call('POST', '/checkouts/', { products: [book.id], allow_discount_codes: true });

    const first = await open();
    expect((await update(first.client_secret, { discount_code: 'ONCEEACH', customer_email: 'ivy@example.com' })).status).toBe(200);
    const paid = await confirm(first.client_secret);
    expect(paid.status).toBe(200);
    expect((await paid.json()).total_amount).toBe(1000);

    // The same person (the +tag and case aside) applying the code again hears of it at once; nothing is changed.
    const second = await open();
    const applied = await update(second.client_secret, { customer_email: 'Ivy+again@Example.com', discount_code: 'ONCEEACH' });
    expect(applied.status).toBe(403);
    expect(await applied.json()).toMatchObject(LIMIT_REACHED);
    expect(await call('GET', `/checkouts/${second.id}`)).toMatchObject({ discount_id: null, customer_email: null });

    // At confirm too, when the code came first and the address with the confirmation.
    expect((await update(second.client_secret, { discount_code: 'ONCEEACH' })).status).toBe(200);
    const refused = await confirm(second.client_secret, { customer_email: 'ivy@example.com' });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject(LIMIT_REACHED);
    expect((await call('GET', `/checkouts/${second.id}`)).status).toBe('open');

    // Without the code the same customer pays full price; another customer still gets the discount.
    const full = await confirm(second.client_secret, { customer_email: 'ivy@example.com', discount_code: '' });
    expect(full.status).toBe(200);
    expect((await full.json()).total_amount).toBe(2000);
    const other = await open();
    const theirs = await confirm(other.client_secret, { customer_email: 'jay@example.com', discount_code: 'ONCEEACH' });
    expect(theirs.status).toBe(200);
    expect((await theirs.json()).total_amount).toBe(1000);
  });
});
