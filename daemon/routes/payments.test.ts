import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

// Polar's payments API over Till's payment intents, through @polar-sh/sdk 0.49 (its models validate every answer):
// every attempt with its status and decline reason, and a customer's saved methods by id and by external id.

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let checkoutId: string;
let customerId: string;

const confirm = (clientSecret: string, token: string) =>
  v1Request(daemon.url, undefined, 'POST', `/checkouts/client/${clientSecret}/confirm`, { confirmation_token_id: token, customer_billing_address: { country: 'DE' } });

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Pia Payments' });
  organizationId = await createOrganization(owner, 'Payments Co');
  const sdk = polarSdk(daemon.url, owner.token);
  const product = await sdk.products.create({ organizationId, name: 'Atlas', prices: [{ amountType: 'fixed', priceAmount: 2500 }] } as ProductCreate);
  const checkout = await sdk.checkouts.create({ products: [product.id], customerEmail: 'payer@example.com', externalCustomerId: 'payer-7' });
  checkoutId = checkout.id;
  // Declined first, then paid with another card: two attempts of one checkout.
  expect((await confirm(checkout.clientSecret, 'tok_chargeDeclinedInsufficientFunds')).status).toBe(400);
  expect((await confirm(checkout.clientSecret, 'tok_mastercard')).status).toBe(200);
  customerId = (await sdk.checkouts.get({ id: checkout.id })).customerId!;
});
afterAll(async () => {
  await daemon?.close();
});

describe('GET /v1/payments', () => {
  it('needs authentication', async () => {
    expect((await v1Request(daemon.url, undefined, 'GET', '/payments')).status).toBe(401);
    expect((await v1Request(daemon.url, undefined, 'GET', `/customers/${customerId}/payment-methods`)).status).toBe(401);
  });

  it('lists every attempt of a checkout with its status and decline reason, as the SDK validates them', async () => {
    const sdk = polarSdk(daemon.url, owner.token);
    const page = await sdk.payments.list({ checkoutId, sorting: ['created_at'] });
    const [declined, paid] = page.result.items;
    expect(page.result.items).toHaveLength(2);
    expect(declined).toMatchObject({
      status: 'failed', amount: 2500, currency: 'usd', method: 'card', trigger: 'purchase', checkoutId, orderId: null, organizationId,
      declineReason: 'insufficient_funds', declineMessage: 'Your card has insufficient funds.', methodMetadata: { brand: 'visa', last4: '9995' },
    });
    expect(paid).toMatchObject({ status: 'succeeded', declineReason: null, declineMessage: null, methodMetadata: { brand: 'mastercard', last4: '4444' }, processorMetadata: { processor: 'sandbox', intent_status: 'succeeded' } });
    const order = (await sdk.orders.list({ checkoutId })).result.items[0]!;
    expect(paid!.orderId).toBe(order.id);
    expect(await sdk.payments.get({ id: paid!.id })).toMatchObject({ id: paid!.id, orderId: order.id, status: 'succeeded' });
  });

  it('filters by status, order, customer and customer email', async () => {
    const sdk = polarSdk(daemon.url, owner.token);
    const ids = async (filter: Parameters<typeof sdk.payments.list>[0]) => (await sdk.payments.list({ organizationId, ...filter })).result.items.map((p) => p.status);
    expect(await ids({ status: 'failed' })).toEqual(['failed']);
    expect(await ids({ status: ['succeeded', 'pending'] })).toEqual(['succeeded']);
    expect(await ids({ customerEmail: 'payer@example.com', status: 'succeeded' })).toEqual(['succeeded']);
    expect(await ids({ customerEmail: 'nobody@example.com' })).toEqual([]);
    const order = (await sdk.orders.list({ checkoutId })).result.items[0]!;
    expect(await ids({ orderId: order.id })).toEqual(['succeeded']);
    expect(await ids({ customerId })).toContain('succeeded');
    const raw = await v1Request(daemon.url, owner.token, 'GET', '/payments?status=settled');
    expect(raw.status).toBe(422);
  });

  it('hides another organization’s payments and answers an unknown one with the SDK’s ResourceNotFound', async () => {
    const stranger = await signUp(daemon.url, { name: 'Sam Stranger' });
    await createOrganization(stranger, 'Elsewhere');
    const theirs = polarSdk(daemon.url, stranger.token);
    expect((await theirs.payments.list({ checkoutId })).result.items).toEqual([]);
    const [payment] = (await polarSdk(daemon.url, owner.token).payments.list({ checkoutId })).result.items;
    await expect(theirs.payments.get({ id: payment!.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polarSdk(daemon.url, owner.token).payments.get({ id: 'no-such-payment' })).rejects.toBeInstanceOf(ResourceNotFound);
  });
});

describe('GET /v1/customers/{id}/payment-methods', () => {
  it('lists the saved card by customer id and by external id: brand, last four and expiry only', async () => {
    const sdk = polarSdk(daemon.url, owner.token);
    const byId = await sdk.customers.listPaymentMethods({ id: customerId });
    expect(byId.result.items).toHaveLength(1);
    const [method] = byId.result.items;
    expect(method).toMatchObject({ type: 'card', processor: 'stripe', isDefault: true, customerId, methodMetadata: { brand: 'mastercard', last4: '4444', expMonth: 12 } });
    expect(Object.keys((method as { methodMetadata: object }).methodMetadata).sort()).toEqual(['brand', 'expMonth', 'expYear', 'last4', 'wallet']);
    const byExternal = await sdk.customers.listPaymentMethodsExternal({ externalId: 'payer-7' });
    expect(byExternal.result.items).toEqual(byId.result.items);
    const raw = await (await v1Request(daemon.url, owner.token, 'GET', `/customers/${customerId}/payment-methods`)).text();
    expect(raw).not.toMatch(/pm_sandbox|processor_method/);
  });

  it('answers an unknown customer with 404', async () => {
    await expect(polarSdk(daemon.url, owner.token).customers.listPaymentMethods({ id: 'no-such-customer' })).rejects.toBeInstanceOf(ResourceNotFound);
  });
});
