import type { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let sdk: Polar;

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);
const product = (input: Record<string, unknown>) => sdk.products.create({ organizationId, ...input } as ProductCreate);
const freeMonthly = (name: string) => product({ name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 0 }] });
const customer = (email: string, externalId?: string) => sdk.customers.create({ organizationId, email, externalId });

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Fran Free' });
  organizationId = await createOrganization(owner, 'Free Tier');
  sdk = polarSdk(daemon.url, owner.token);
});
afterAll(async () => {
  await daemon?.close();
});

describe('POST /v1/subscriptions/', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    expect((await v1(undefined, 'POST', '/subscriptions/', { product_id: crypto.randomUUID(), customer_id: crypto.randomUUID() })).status).toBe(401);
  });

  it('subscribes a customer to a free plan without a checkout: active at once, its benefits granted, no order, a checkout’s events', async () => {
    const plan = await freeMonthly('Free plan');
    const note = await sdk.benefits.create({ organizationId, type: 'custom', description: 'Community access', properties: { note: 'Join the forum' } });
    await sdk.products.updateBenefits({ id: plan.id, productBenefitsUpdate: { benefits: [note.id] } });
    const buyer = await customer('free@example.com');

    const created = await sdk.subscriptions.create({ productId: plan.id, customerId: buyer.id, metadata: { source: 'signup' } });
    expect(created).toMatchObject({ status: 'active', amount: 0, currency: 'usd', recurringInterval: 'month', productId: plan.id, customerId: buyer.id, checkoutId: null, metadata: { source: 'signup' }, cancelAtPeriodEnd: false });
    expect(created.currentPeriodEnd!.getTime()).toBeGreaterThan(created.currentPeriodStart.getTime());
    expect(await sdk.subscriptions.get({ id: created.id })).toMatchObject({ id: created.id, status: 'active' });

    const grants = await sdk.benefitGrants.list({ customerId: buyer.id });
    expect(grants.result.items).toEqual([expect.objectContaining({ benefitId: note.id, subscriptionId: created.id, isGranted: true })]);
    expect((await sdk.orders.list({ customerId: buyer.id })).result.items).toEqual([]);

    const types = (await listEvents(daemon.db, organizationId)).filter((e) => JSON.stringify(e.payload.data).includes(buyer.id)).map((e) => e.payload.type);
    expect(types).toEqual(expect.arrayContaining(['subscription.created', 'subscription.active', 'subscription.updated', 'benefit_grant.created', 'customer.state_changed']));
    expect(types).not.toContain('order.created');
  });

  it('finds the customer by external id', async () => {
    const plan = await freeMonthly('Free plan by external id');
    const buyer = await customer('ext@example.com', 'user-42');
    const res = await v1(owner.token, 'POST', '/subscriptions/', { product_id: plan.id, external_customer_id: 'user-42' });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ customer_id: buyer.id, status: 'active' });
  });

  it('refuses a paid or one-time product and a customer it cannot find with Polar’s 422s, writing nothing', async () => {
    const paid = await product({ name: 'Paid plan', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 900 }] });
    const oneTime = await product({ name: 'Free ebook', prices: [{ amountType: 'fixed', priceAmount: 0 }] });
    const plan = await freeMonthly('Another free plan');
    const buyer = await customer('refused@example.com');
    const cases: [Record<string, unknown>, string, string][] = [
      [{ product_id: paid.id, customer_id: buyer.id }, 'product_id', 'Product is not free. The customer should go through a checkout to create a paid subscription.'],
      [{ product_id: oneTime.id, customer_id: buyer.id }, 'product_id', 'Product is not a recurring product.'],
      [{ product_id: crypto.randomUUID(), customer_id: buyer.id }, 'product_id', 'Product does not exist.'],
      [{ product_id: plan.id, customer_id: crypto.randomUUID() }, 'customer_id', 'Customer does not exist.'],
      [{ product_id: plan.id, external_customer_id: 'nobody' }, 'external_customer_id', 'Customer does not exist.'],
    ];
    for (const [body, field, msg] of cases) {
      const res = await v1(owner.token, 'POST', '/subscriptions/', body);
      expect(res.status, msg).toBe(422);
      expect((await res.json()).detail).toEqual([{ loc: ['body', field], msg, type: 'value_error' }]);
    }
    const viaSdk = await sdk.subscriptions.create({ productId: paid.id, customerId: buyer.id }).catch((e: unknown) => e);
    expect(viaSdk).toBeInstanceOf(HTTPValidationError);
    expect((await v1(owner.token, 'POST', '/subscriptions/', { product_id: plan.id })).status).toBe(422);
    expect((await sdk.subscriptions.list({ customerId: buyer.id })).result.items).toEqual([]);
  });

  it('needs subscriptions:write', async () => {
    const plan = await freeMonthly('Scoped free plan');
    const buyer = await customer('scoped@example.com');
    const minted = await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'read only', scopes: ['subscriptions:read', 'products:read', 'customers:read'], organization_id: organizationId });
    const { token } = (await minted.json()) as { token: string };
    expect((await v1(token, 'POST', '/subscriptions/', { product_id: plan.id, customer_id: buyer.id })).status).toBe(403);
  });
});
