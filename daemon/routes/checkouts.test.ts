import type { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { PaymentError } from '@polar-sh/sdk/models/errors/paymenterror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { NotOpenCheckout } from '@polar-sh/sdk/models/errors/notopencheckout.js';
import { ExpiredCheckoutError } from '@polar-sh/sdk/models/errors/expiredcheckouterror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let sdk: Polar;
let anonymous: Polar;

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);
const product = (input: Record<string, unknown>) => sdk.products.create({ organizationId, ...input } as ProductCreate);
const oneTime = (priceAmount = 2500, name = 'Ebook') => product({ name, prices: [{ amountType: 'fixed', priceAmount }] });

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Carla Checkout' });
  organizationId = await createOrganization(owner, 'Checkout Shop');
  sdk = polarSdk(daemon.url, owner.token);
  anonymous = polarSdk(daemon.url, '');
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/checkouts', () => {
  it('answers 401 Unauthorized to a seller call without credentials', async () => {
    expect((await v1(undefined, 'GET', '/checkouts/')).status).toBe(401);
    expect((await v1(undefined, 'POST', '/checkouts/', { products: [] })).status).toBe(401);
  });

  it('creates, gets, lists and updates a checkout through the SDK with every amount computed', async () => {
    const ebook = await oneTime(2500);
    const created = await sdk.checkouts.create({ products: [ebook.id], metadata: { source: 'test' } });
    expect(created).toMatchObject({
      status: 'open',
      productId: ebook.id,
      productPriceId: ebook.prices[0].id,
      amount: 2500,
      discountAmount: 0,
      netAmount: 2500,
      taxAmount: 0,
      totalAmount: 2500,
      currency: 'usd',
      isPaymentRequired: true,
      isPaymentFormRequired: true,
      isPaymentSetupRequired: false,
      isFreeProductPrice: false,
      metadata: { source: 'test' },
      organizationId,
    });
    expect(created.url).toBe(`${daemon.url}/checkout/${created.clientSecret}`);
    // Polar's CHECKOUT_TTL_SECONDS: 24 hours.
    expect(created.expiresAt.getTime() - created.createdAt.getTime()).toBe(24 * 3_600_000);

    const fetched = await sdk.checkouts.get({ id: created.id });
    expect(fetched).toMatchObject({ id: created.id, clientSecret: created.clientSecret, totalAmount: 2500 });
    const listed = await sdk.checkouts.list({ organizationId, productId: ebook.id });
    expect(listed.result.items.map((c) => c.id)).toEqual([created.id]);
    const byExternalId = await sdk.checkouts.create({ products: [ebook.id], externalCustomerId: 'crm-42' });
    expect((await sdk.checkouts.list({ externalCustomerId: 'crm-42' })).result.items.map((c) => c.id)).toEqual([byExternalId.id]);

    const updated = await sdk.checkouts.update({ id: created.id, checkoutUpdate: { customerEmail: 'buyer@example.com', metadata: { source: 'updated' } } });
    expect(updated).toMatchObject({ customerEmail: 'buyer@example.com', metadata: { source: 'updated' } });
    const events = (await listEvents(daemon.db, organizationId)).filter((e) => (e.payload.data as { id: string }).id === created.id).map((e) => e.payload.type);
    expect(events).toEqual(['checkout.created', 'checkout.updated']);
  });

  it('refuses a checkout for a product of another organization or with no product, writing nothing', async () => {
    const stranger = await signUp(daemon.url, { name: 'Stranger' });
    const theirOrg = await createOrganization(stranger, 'Elsewhere');
    const theirs = await polarSdk(daemon.url, stranger.token).products.create({ name: 'Theirs', organizationId: theirOrg, prices: [{ amountType: 'fixed', priceAmount: 900 }] } as ProductCreate);
    const before = Number((await daemon.db('checkouts').count({ n: '*' }))[0].n);
    await expect(sdk.checkouts.create({ products: [theirs.id] })).rejects.toBeInstanceOf(HTTPValidationError);
    const res = await v1(owner.token, 'POST', '/checkouts/', { products: [] });
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toContain('products');
    expect(Number((await daemon.db('checkouts').count({ n: '*' }))[0].n)).toBe(before);
  });

  it('applies a discount and a tax rate to the net amount, rounding half up', async () => {
    const course = await oneTime(999, 'Course');
    const discount = await sdk.discounts.create({ name: 'Third off', type: 'percentage', basisPoints: 3333, duration: 'once', organizationId });
    const rate = await (await v1(owner.token, 'POST', '/tax-rates', { country: 'FR', basis_points: 2000 })).json();
    expect(rate).toMatchObject({ country: 'FR', state: null, basis_points: 2000, organization_id: organizationId });
    const checkout = await sdk.checkouts.create({ products: [course.id], discountId: discount.id, customerBillingAddress: { country: 'FR' } });
    // 999 × 33.33 % = 332.967 → 333; net 666; tax 20 % = 133.2 → 133.
    expect(checkout).toMatchObject({ amount: 999, discountAmount: 333, netAmount: 666, taxAmount: 133, totalAmount: 799, discountId: discount.id });
    const elsewhere = await anonymous.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { customerBillingAddress: { country: 'DE' } } });
    expect(elsewhere).toMatchObject({ taxAmount: 0, totalAmount: 666 });
    expect((await v1(owner.token, 'DELETE', `/tax-rates/${rate.id}`)).status).toBe(204);
  });

  it('takes a state rate over the country rate, and refuses a second rate for the same place', async () => {
    expect((await v1(owner.token, 'POST', '/tax-rates', { country: 'us', basis_points: 500 })).status).toBe(201);
    const ny = await v1(owner.token, 'POST', '/tax-rates', { country: 'US', state: 'NY', basis_points: 887 });
    expect(await ny.json()).toMatchObject({ country: 'US', state: 'US-NY', basis_points: 887 });
    const again = await v1(owner.token, 'POST', '/tax-rates', { country: 'US', state: 'US-NY', basis_points: 100 });
    expect(again.status).toBe(422);
    const item = await oneTime(10_000, 'Lamp');
    const inNy = await sdk.checkouts.create({ products: [item.id], customerBillingAddress: { country: 'US', state: 'NY' } });
    const inCa = await sdk.checkouts.create({ products: [item.id], customerBillingAddress: { country: 'US', state: 'CA' } });
    expect(inNy.taxAmount).toBe(887);
    expect(inCa.taxAmount).toBe(500);
    const list = await (await v1(owner.token, 'GET', '/tax-rates?country=US')).json();
    expect(list.items.map((r: { state: string | null }) => r.state)).toEqual([null, 'US-NY']);
    for (const r of list.items) await v1(owner.token, 'DELETE', `/tax-rates/${r.id}`);
  });

  it('completes a one-time purchase through the SDK client calls with a test token, creating customer, order and payment', async () => {
    const ebook = await oneTime(1500, 'Guide');
    const checkout = await sdk.checkouts.create({ products: [ebook.id] });
    const publicView = await anonymous.checkouts.clientGet({ clientSecret: checkout.clientSecret });
    expect(publicView).toMatchObject({ id: checkout.id, totalAmount: 1500, organization: { id: organizationId } });
    expect(publicView).not.toHaveProperty('metadata');
    await anonymous.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { customerEmail: 'reader@example.com', customerName: 'Reader' } });
    const confirmed = await anonymous.checkouts.clientConfirm({
      clientSecret: checkout.clientSecret,
      checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'US', state: 'NY' } },
    });
    expect(confirmed.status).toBe('confirmed');
    const after = await sdk.checkouts.get({ id: checkout.id });
    expect(after).toMatchObject({ status: 'succeeded', customerEmail: 'reader@example.com' });
    expect(after.customerId).toBeTruthy();
    const order = await daemon.db('orders').where({ checkout_id: checkout.id }).first();
    expect(order).toMatchObject({ status: 'paid', billing_reason: 'purchase', customer_id: after.customerId });
    expect(Number(order.total_amount)).toBe(1500);
    const payments = await daemon.db('payments').where({ checkout_id: checkout.id });
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({ status: 'succeeded', method_brand: 'visa', method_last4: '4242', order_id: order.id });
    const types = (await listEvents(daemon.db, organizationId)).map((e) => e.payload.type);
    expect(types).toEqual(expect.arrayContaining(['customer.created', 'order.created', 'order.paid']));
    // A paid checkout is closed.
    await expect(anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa' } })).rejects.toBeInstanceOf(NotOpenCheckout);
  });

  it('answers a declined card clearly, records the failed payment, and keeps the checkout open for another card', async () => {
    const item = await oneTime(4200, 'Poster');
    const checkout = await sdk.checkouts.create({ products: [item.id], customerEmail: 'declined@example.com' });
    const secret = checkout.clientSecret;
    const declined = anonymous.checkouts.clientConfirm({ clientSecret: secret, checkoutConfirmStripe: { confirmationTokenId: 'tok_chargeDeclinedInsufficientFunds', customerBillingAddress: { country: 'GB' } } });
    await expect(declined).rejects.toBeInstanceOf(PaymentError);
    await expect(declined).rejects.toMatchObject({ statusCode: 400, detail: 'Your card has insufficient funds.' });
    expect((await sdk.checkouts.get({ id: checkout.id })).status).toBe('open');
    const failed = await daemon.db('payments').where({ checkout_id: checkout.id });
    expect(failed).toMatchObject([{ status: 'failed', decline_code: 'insufficient_funds', method_last4: '9995' }]);
    expect(await daemon.db('orders').where({ checkout_id: checkout.id })).toHaveLength(0);
    await anonymous.checkouts.clientConfirm({ clientSecret: secret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa' } });
    expect((await sdk.checkouts.get({ id: checkout.id })).status).toBe('succeeded');
    const statuses = (await listEvents(daemon.db, organizationId))
      .filter((e) => (e.payload.data as { id: string }).id === checkout.id)
      .map((e) => `${e.payload.type}:${(e.payload.data as { status: string }).status}`);
    // The first confirmation also applied its billing address (an update).
    expect(statuses).toEqual(['checkout.created:open', 'checkout.updated:open', 'checkout.updated:confirmed', 'checkout.updated:open', 'checkout.updated:confirmed', 'checkout.updated:succeeded']);
  });

  it('refuses to confirm without an email or a payment method, and an unknown test token, changing nothing', async () => {
    const item = await oneTime(700, 'Sticker');
    const checkout = await sdk.checkouts.create({ products: [item.id] });
    const noEmail = await v1(undefined, 'POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { confirmation_token_id: 'tok_visa', customer_billing_address: { country: 'GB' } });
    expect(noEmail.status).toBe(422);
    expect(JSON.stringify(await noEmail.json())).toContain('customer_email');
    const noMethod = await v1(undefined, 'POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { customer_email: 'x@example.com', customer_billing_address: { country: 'GB' } });
    expect(noMethod.status).toBe(422);
    expect(JSON.stringify(await noMethod.json())).toContain('confirmation_token_id');
    const unknown = await v1(undefined, 'POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { customer_email: 'x@example.com', customer_billing_address: { country: 'GB' }, confirmation_token_id: 'tok_nope' });
    expect(unknown.status).toBe(422);
    expect(JSON.stringify(await unknown.json())).toContain('tok_visa');
    expect((await sdk.checkouts.get({ id: checkout.id })).status).toBe('open');
    expect(await daemon.db('payments').where({ checkout_id: checkout.id })).toHaveLength(0);
  });

  it('delivers a free product without any payment', async () => {
    const free = await product({ name: 'Freebie', prices: [{ amountType: 'fixed', priceAmount: 0 }] });
    const checkout = await sdk.checkouts.create({ products: [free.id] });
    expect(checkout).toMatchObject({ isFreeProductPrice: true, isPaymentRequired: false, isPaymentFormRequired: false, totalAmount: 0 });
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { customerEmail: 'free@example.com' } });
    expect((await sdk.checkouts.get({ id: checkout.id })).status).toBe('succeeded');
    expect(await daemon.db('payments').where({ checkout_id: checkout.id })).toHaveLength(0);
    expect(await daemon.db('orders').where({ checkout_id: checkout.id })).toHaveLength(1);
  });

  it('starts a subscription for a recurring product with a subscription_create order', async () => {
    const monthly = await product({ name: 'Monthly', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1200 }] });
    const checkout = await sdk.checkouts.create({ products: [monthly.id], customerEmail: 'sub@example.com' });
    expect(checkout).toMatchObject({ isPaymentSetupRequired: true, isPaymentRequired: true });
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'NL' } } });
    const after = await sdk.checkouts.get({ id: checkout.id });
    expect(after.status).toBe('succeeded');
    expect(after.subscriptionId).toBeTruthy();
    const order = await daemon.db('orders').where({ checkout_id: checkout.id }).first();
    expect(order).toMatchObject({ billing_reason: 'subscription_create', subscription_id: after.subscriptionId, status: 'paid' });
    expect(await daemon.db('payment_methods').where({ customer_id: after.customerId })).toHaveLength(1);
  });

  it('applies a discount code from the customer, and refuses an unknown code or one when codes are off', async () => {
    const item = await oneTime(2000, 'Mug');
    await sdk.discounts.create({ name: 'Five off', type: 'fixed', amount: 500, currency: 'usd', duration: 'once', code: 'FIVEOFF', organizationId });
    const checkout = await sdk.checkouts.create({ products: [item.id] });
    const applied = await anonymous.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { discountCode: 'fiveoff' } });
    expect(applied).toMatchObject({ discountAmount: 500, netAmount: 1500, totalAmount: 1500 });
    expect(applied.discount).toMatchObject({ code: 'FIVEOFF', type: 'fixed', amount: 500 });
    await expect(anonymous.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { discountCode: 'NOPE123' } })).rejects.toBeInstanceOf(HTTPValidationError);
    const closed = await sdk.checkouts.create({ products: [item.id], allowDiscountCodes: false });
    await expect(anonymous.checkouts.clientUpdate({ clientSecret: closed.clientSecret, checkoutUpdatePublic: { discountCode: 'FIVEOFF' } })).rejects.toBeInstanceOf(HTTPValidationError);
  });

  it('takes off a multi-currency fixed discount in the checkout’s currency, and refuses it in a currency it has no amount in', async () => {
    const item = await product({
      name: 'Poster',
      prices: [
        { amountType: 'fixed', priceAmount: 2000, priceCurrency: 'usd' },
        { amountType: 'fixed', priceAmount: 1800, priceCurrency: 'eur' },
        { amountType: 'fixed', priceAmount: 1600, priceCurrency: 'gbp' },
      ],
    });
    const discount = await sdk.discounts.create({ name: 'Posters off', type: 'fixed', duration: 'once', amounts: { usd: 500, eur: 400 }, code: 'POSTERS', organizationId });

    const inEuros = await sdk.checkouts.create({ products: [item.id], currency: 'eur', discountId: discount.id });
    expect(inEuros).toMatchObject({ currency: 'eur', amount: 1800, discountAmount: 400, netAmount: 1400, totalAmount: 1400 });
    expect(inEuros.discount).toMatchObject({ type: 'fixed', amounts: { usd: 500, eur: 400 } });
    const inDollars = await sdk.checkouts.create({ products: [item.id], currency: 'usd' });
    expect(await anonymous.checkouts.clientUpdate({ clientSecret: inDollars.clientSecret, checkoutUpdatePublic: { discountCode: 'posters' } })).toMatchObject({ discountAmount: 500, totalAmount: 1500 });

    const inPounds = (await v1(owner.token, 'POST', '/checkouts/', { products: [item.id], currency: 'gbp', discount_id: discount.id }));
    expect(inPounds.status).toBe(422);
    expect((await inPounds.json()).detail).toEqual([expect.objectContaining({ loc: ['body', 'discount_id'], msg: expect.stringContaining('no amount in GBP') })]);
    const pounds = await sdk.checkouts.create({ products: [item.id], currency: 'gbp' });
    const byCode = await anonymous.checkouts.clientUpdate({ clientSecret: pounds.clientSecret, checkoutUpdatePublic: { discountCode: 'POSTERS' } }).catch((e: unknown) => e);
    expect((byCode as HTTPValidationError).detail?.map((d) => d.loc)).toEqual([['body', 'discount_code']]);
    expect(await sdk.checkouts.get({ id: pounds.id })).toMatchObject({ discountId: null, totalAmount: 1600 });
  });

  it('checks custom field data against the product’s fields, requiring the required ones at confirmation', async () => {
    const field = await sdk.customFields.create({ type: 'number', slug: `seats${Date.now()}`, name: 'Seats', properties: { ge: 1, le: 10 }, organizationId });
    const item = await product({ name: 'Workshop', prices: [{ amountType: 'fixed', priceAmount: 5000 }], attachedCustomFields: [{ customFieldId: field.id, required: true }] });
    const checkout = await sdk.checkouts.create({ products: [item.id], customerEmail: 'cf@example.com' });
    const tooMany = await v1(undefined, 'PATCH', `/checkouts/client/${checkout.clientSecret}`, { custom_field_data: { [field.slug]: 11 } });
    expect(tooMany.status).toBe(422);
    const unknown = await v1(undefined, 'PATCH', `/checkouts/client/${checkout.clientSecret}`, { custom_field_data: { other: 'x' } });
    expect(unknown.status).toBe(422);
    const missing = await v1(undefined, 'POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { confirmation_token_id: 'tok_visa', customer_billing_address: { country: 'GB' } });
    expect(missing.status).toBe(422);
    expect(JSON.stringify(await missing.json())).toContain(field.slug);
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customFieldData: { [field.slug]: 3 }, customerBillingAddress: { country: 'GB' } } });
    expect((await sdk.checkouts.get({ id: checkout.id })).customFieldData).toEqual({ [field.slug]: 3 });
  });

  it('answers 404 ResourceNotFound for an unknown client secret and another organization’s checkout', async () => {
    await expect(anonymous.checkouts.clientGet({ clientSecret: 'polar_c_unknown' })).rejects.toBeInstanceOf(ResourceNotFound);
    const stranger = await signUp(daemon.url, { name: 'Nosy' });
    await createOrganization(stranger, 'Nosy Org');
    const item = await oneTime(300, 'Pin');
    const checkout = await sdk.checkouts.create({ products: [item.id] });
    await expect(polarSdk(daemon.url, stranger.token).checkouts.get({ id: checkout.id })).rejects.toBeInstanceOf(ResourceNotFound);
  });

  it('refuses a pay-what-you-want amount below the minimum', async () => {
    const pwyw = await product({ name: 'Tip jar', prices: [{ amountType: 'custom', minimumAmount: 500, presetAmount: 1000 }] });
    const checkout = await sdk.checkouts.create({ products: [pwyw.id] });
    expect(checkout.amount).toBe(1000);
    const low = await v1(undefined, 'PATCH', `/checkouts/client/${checkout.clientSecret}`, { amount: 100 });
    expect(low.status).toBe(422);
    const chosen = await anonymous.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { amount: 1500 } });
    expect(chosen.totalAmount).toBe(1500);
  });

  it('expires an open checkout at expires_at on the organization’s clock, announcing checkout.expired as Polar does', async () => {
    // A sandbox organization of its own, so advancing its clock touches nothing else.
    const sandboxOrg = await createOrganization(owner, 'Sandbox Shop');
    expect((await v1(owner.token, 'PATCH', `/organizations/${sandboxOrg}/clock`, { sandbox: true })).status).toBe(200);
    const item = await sdk.products.create({ organizationId: sandboxOrg, name: 'Calendar', prices: [{ amountType: 'fixed', priceAmount: 800 }] } as ProductCreate);
    const expiring = await sdk.checkouts.create({ products: [item.id], customerEmail: 'late@example.com' });
    expect(expiring.organizationId).toBe(sandboxOrg);
    const almost = await v1(owner.token, 'POST', `/organizations/${sandboxOrg}/clock/advance`, { by: '+1439m' });
    expect(almost.status).toBe(200);
    expect((await sdk.checkouts.get({ id: expiring.id })).status).toBe('open');
    expect((await v1(owner.token, 'POST', `/organizations/${sandboxOrg}/clock/advance`, { by: '+2m' })).status).toBe(200);
    expect((await sdk.checkouts.get({ id: expiring.id })).status).toBe('expired');
    await expect(anonymous.checkouts.clientGet({ clientSecret: expiring.clientSecret })).rejects.toBeInstanceOf(ExpiredCheckoutError);
    await expect(anonymous.checkouts.clientUpdate({ clientSecret: expiring.clientSecret, checkoutUpdatePublic: { customerName: 'Too late' } })).rejects.toBeInstanceOf(ExpiredCheckoutError);
    await expect(anonymous.checkouts.clientConfirm({ clientSecret: expiring.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa' } })).rejects.toBeInstanceOf(ExpiredCheckoutError);
    const events = (await listEvents(daemon.db, sandboxOrg)).filter((e) => (e.payload.data as { id: string }).id === expiring.id);
    expect(events.map((e) => [e.payload.type, (e.payload.data as { status: string }).status])).toEqual([['checkout.created', 'open'], ['checkout.expired', 'expired']]);
  });

  it('fills {CHECKOUT_ID} in the success URL with the checkout id, as Polar reads it out', async () => {
    const item = await oneTime(900, 'Poster');
    const checkout = await sdk.checkouts.create({ products: [item.id], successUrl: 'https://shop.example/thanks?checkout_id={CHECKOUT_ID}' });
    expect(checkout.successUrl).toBe(`https://shop.example/thanks?checkout_id=${checkout.id}`);
    expect((await anonymous.checkouts.clientGet({ clientSecret: checkout.clientSecret })).successUrl).toBe(`https://shop.example/thanks?checkout_id=${checkout.id}`);
  });

  it('links the existing customer named by external_customer_id, as Polar does, so the checkout needs no email', async () => {
    const item = await oneTime(700, 'Sticker');
    const customer = await sdk.customers.create({ email: 'linked@example.com', name: 'Lin Ked', externalId: 'user-linked', organizationId });
    const checkout = await sdk.checkouts.create({ products: [item.id], externalCustomerId: 'user-linked' });
    expect(checkout).toMatchObject({ customerId: customer.id, externalCustomerId: 'user-linked', customerEmail: 'linked@example.com', customerName: 'Lin Ked' });
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'DE' } } });
    expect(await daemon.db('orders').where({ checkout_id: checkout.id }).first()).toMatchObject({ status: 'paid', customer_id: customer.id });
    // An external id no customer has yet is kept for the customer the confirmation makes.
    const fresh = await sdk.checkouts.create({ products: [item.id], externalCustomerId: 'user-new' });
    expect(fresh).toMatchObject({ customerId: null, externalCustomerId: 'user-new', customerEmail: null });
  });

  it('starts a trial without charging, saving the card for the first renewal', async () => {
    const trial = await product({ name: 'Trial plan', recurringInterval: 'month', trialInterval: 'day', trialIntervalCount: 14, prices: [{ amountType: 'fixed', priceAmount: 2000 }] });
    const checkout = await sdk.checkouts.create({ products: [trial.id], customerEmail: 'trial@example.com' });
    expect(checkout).toMatchObject({ activeTrialInterval: 'day', activeTrialIntervalCount: 14, isPaymentRequired: false, isPaymentSetupRequired: true, isPaymentFormRequired: true, totalAmount: 2000 });
    expect(checkout.trialEnd!.getTime() - checkout.createdAt.getTime()).toBeGreaterThanOrEqual(14 * 86_400_000 - 60_000);
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'NL' } } });
    const after = await sdk.checkouts.get({ id: checkout.id });
    expect(after.status).toBe('succeeded');
    expect(await daemon.db('payments').where({ checkout_id: checkout.id })).toHaveLength(0);
    expect(await daemon.db('payment_methods').where({ customer_id: after.customerId })).toMatchObject([{ brand: 'visa', last4: '4242' }]);
    const subscription = await daemon.db('subscriptions').where({ id: after.subscriptionId }).first();
    expect(subscription.status).toBe('trialing');
    const order = await daemon.db('orders').where({ checkout_id: checkout.id }).first();
    expect(Number(order.total_amount)).toBe(0);
  });

  it('lets the customer decline a trial with allow_trial false, and then charges at once', async () => {
    const trial = await product({ name: 'Trial plan 2', recurringInterval: 'month', trialInterval: 'week', trialIntervalCount: 1, prices: [{ amountType: 'fixed', priceAmount: 1000 }] });
    const checkout = await sdk.checkouts.create({ products: [trial.id], customerEmail: 'notrial@example.com' });
    const declined = await anonymous.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { allowTrial: false } });
    expect(declined).toMatchObject({ activeTrialInterval: null, trialEnd: null, isPaymentRequired: true });
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'NL' } } });
    expect(await daemon.db('payments').where({ checkout_id: checkout.id, status: 'succeeded' })).toHaveLength(1);
  });
});
