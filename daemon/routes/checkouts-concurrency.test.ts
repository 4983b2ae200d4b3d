import type { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let sdk: Polar;

const confirm = (secret: string, email: string) =>
  v1Request(daemon.url, undefined, 'POST', `/checkouts/client/${secret}/confirm`, { confirmation_token_id: 'tok_visa', customer_email: email, customer_billing_address: { country: 'DE' } });

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Rush Seller' });
  organizationId = await createOrganization(owner, 'Rush Shop');
  sdk = polarSdk(daemon.url, owner.token);
});
afterAll(async () => {
  await daemon?.close();
});

describe('concurrent checkout confirmations', () => {
  // Fifty confirmations on one SQLite connection take a while on a loaded machine.
  it('redeem a discount with max_redemptions 10 exactly 10 times out of 50, charging no one without a redemption', { timeout: 120_000 }, async () => {
    const item = await sdk.products.create({ organizationId, name: 'Limited print', prices: [{ amountType: 'fixed', priceAmount: 3000 }] } as ProductCreate);
    const discount = await sdk.discounts.create({ organizationId, name: 'First ten', type: 'percentage', basisPoints: 5000, duration: 'once', maxRedemptions: 10 });
    const checkouts = [];
    for (let i = 0; i < 50; i++) checkouts.push(await sdk.checkouts.create({ products: [item.id], discountId: discount.id }));
    expect(checkouts.every((c) => c.totalAmount === 1500)).toBe(true);

    const answers = await Promise.all(checkouts.map((c, i) => confirm(c.clientSecret, `rush${i}@example.com`)));
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 422)).toHaveLength(40);
    const refused = await Promise.all(answers.filter((res) => res.status === 422).map((res) => res.json()));
    for (const body of refused) expect(body.detail[0]).toMatchObject({ loc: ['body', 'discount_code'], msg: expect.stringContaining('fully redeemed') });

    expect((await sdk.discounts.get({ id: discount.id })).redemptionsCount).toBe(10);
    const ids = checkouts.map((c) => c.id);
    const payments = await daemon.db('payments').whereIn('checkout_id', ids);
    expect(payments).toHaveLength(10);
    expect(payments.every((p) => p.status === 'succeeded' && Number(p.amount) === 1500)).toBe(true);
    expect(await daemon.db('orders').whereIn('checkout_id', ids).where({ discount_id: discount.id })).toHaveLength(10);
    const rows = await daemon.db('checkouts').whereIn('id', ids);
    expect(rows.filter((r) => r.status === 'succeeded')).toHaveLength(10);
    expect(rows.filter((r) => r.status === 'open')).toHaveLength(40);
  });

  it('charge one checkout once when it is confirmed twice at the same moment', async () => {
    const item = await sdk.products.create({ organizationId, name: 'Single', prices: [{ amountType: 'fixed', priceAmount: 900 }] } as ProductCreate);
    const checkout = await sdk.checkouts.create({ products: [item.id] });
    const answers = await Promise.all(Array.from({ length: 5 }, () => confirm(checkout.clientSecret, 'twice@example.com')));
    expect(answers.map((res) => res.status).sort()).toEqual([200, 403, 403, 403, 403]);
    expect(await daemon.db('payments').where({ checkout_id: checkout.id })).toHaveLength(1);
    expect(await daemon.db('orders').where({ checkout_id: checkout.id })).toHaveLength(1);
  });
});
