import { RefundedAlready } from '@polar-sh/sdk/models/errors/refundedalready.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPaidOrder } from '../../core/billing/orders/testing.js';
import { systemClock } from '../../core/clock.js';
import { createSandboxProcessor } from '../../core/payments/sandbox.js';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let customerId: string;

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

const paidOrder = (input: Partial<Parameters<typeof seedPaidOrder>[3]> = {}) =>
  seedPaidOrder(daemon.db, systemClock, createSandboxProcessor({ db: daemon.db }), { organizationId, customerId, label: 'Course', amount: 1000, taxAmount: 200, ...input });

const orderRow = async (id: string) => (await v1(owner.token, 'GET', `/orders/${id}`)).json();
const eventsAbout = async (id: string) =>
  (await listEvents(daemon.db, organizationId)).filter((e) => {
    const data = e.payload.data as { id?: string; order_id?: string };
    return data.id === id || data.order_id === id;
  });

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Rita Refunds' });
  organizationId = await createOrganization(owner, 'Refund Co');
  customerId = (await polarSdk(daemon.url, owner.token).customers.create({ email: 'ada@example.com', organizationId })).id;
});
afterAll(async () => {
  await daemon?.close();
});

describe('POST /v1/refunds', () => {
  it('refunds part then the rest through the SDK: paid → partially_refunded → refunded, tax in proportion', async () => {
    const { id } = await paidOrder();
    const polar = polarSdk(daemon.url, owner.token);
    const first = await polar.refunds.create({ orderId: id, amount: 400, reason: 'customer_request', comment: 'half a course', metadata: { ticket: 'T-1' } });
    expect(first).toMatchObject({ orderId: id, amount: 400, taxAmount: 80, currency: 'usd', status: 'succeeded', reason: 'customer_request', customerId, organizationId, revokeBenefits: false, metadata: { ticket: 'T-1' }, subscriptionId: null, dispute: null });
    expect(await orderRow(id)).toMatchObject({ status: 'partially_refunded', refunded_amount: 400, refunded_tax_amount: 80, refundable_amount: 600, refundable_tax_amount: 120 });

    const rest = await polar.refunds.create({ orderId: id, amount: 600, reason: 'customer_request' });
    expect(rest).toMatchObject({ amount: 600, taxAmount: 120, status: 'succeeded' });
    expect(await orderRow(id)).toMatchObject({ status: 'refunded', refunded_amount: 1000, refunded_tax_amount: 200, refundable_amount: 0, refundable_tax_amount: 0 });

    const types = (await eventsAbout(id)).map((e) => e.payload.type);
    expect(types).toEqual([
      'order.created', 'order.paid',
      'refund.created', 'refund.updated', 'order.updated', 'order.refunded',
      'refund.created', 'refund.updated', 'order.updated', 'order.refunded',
    ]);
    const refunded = (await eventsAbout(id)).filter((e) => e.payload.type === 'order.refunded').at(-1)!;
    expect(refunded.payload.data).toMatchObject({ status: 'refunded', refunded_amount: 1000 });
  });

  it('refuses more than the refundable amount with a clear 422 and changes nothing', async () => {
    const { id } = await paidOrder();
    await polarSdk(daemon.url, owner.token).refunds.create({ orderId: id, amount: 700, reason: 'other' });
    const res = await v1(owner.token, 'POST', '/refunds/', { order_id: id, amount: 301, reason: 'other' });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body).toMatchObject({ code: 'REFUND_AMOUNT_TOO_HIGH', detail: [{ loc: ['body', 'amount'] }] });
    expect(body.detail[0].msg).toContain('3.00 USD');
    expect(await orderRow(id)).toMatchObject({ status: 'partially_refunded', refunded_amount: 700 });
    expect((await polarSdk(daemon.url, owner.token).refunds.list({ orderId: id })).result.items).toHaveLength(1);
  });

  it('answers a fully refunded order with Polar’s 403 RefundedAlready', async () => {
    const { id } = await paidOrder();
    await polarSdk(daemon.url, owner.token).refunds.create({ orderId: id, amount: 1000, reason: 'duplicate' });
    const res = await v1(owner.token, 'POST', '/refunds/', { order_id: id, amount: 1, reason: 'duplicate' });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'RefundedAlready' });
    await expect(polarSdk(daemon.url, owner.token).refunds.create({ orderId: id, amount: 1, reason: 'duplicate' })).rejects.toBeInstanceOf(RefundedAlready);
  });

  it('refuses bad input at the field: a zero amount, an unknown reason, an unknown order', async () => {
    const { id } = await paidOrder();
    const cases: [unknown, (string | number)[]][] = [
      [{ order_id: id, amount: 0, reason: 'other' }, ['body', 'amount']],
      [{ order_id: id, amount: 10.5, reason: 'other' }, ['body', 'amount']],
      [{ order_id: id, amount: 10, reason: 'bored' }, ['body', 'reason']],
      [{ order_id: '00000000-0000-0000-0000-000000000000', amount: 10, reason: 'other' }, ['body', 'order_id']],
    ];
    for (const [body, loc] of cases) {
      const res = await v1(owner.token, 'POST', '/refunds/', body);
      expect(res.status).toBe(422);
      expect((await res.json()).detail[0].loc).toEqual(loc);
    }
    expect(await orderRow(id)).toMatchObject({ status: 'paid', refunded_amount: 0 });
  });

  it('refuses revoke_benefits on a subscription order with Polar\'s 400 RevokeSubscriptionBenefitsProhibited, refunding nothing', async () => {
    const { id } = await paidOrder({ subscriptionId: null });
    await daemon.db('orders').where({ id }).update({ subscription_id: 'sub-1' });
    const res = await v1(owner.token, 'POST', '/refunds/', { order_id: id, amount: 10, reason: 'other', revoke_benefits: true });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'RevokeSubscriptionBenefitsProhibited', code: 'REVOKE_BENEFITS_NOT_ALLOWED' });
    expect(await daemon.db('refunds').where({ order_id: id })).toEqual([]);
  });

  it('needs refunds:write, and hides another organization’s orders', async () => {
    const { id } = await paidOrder();
    const read = await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'r', scopes: ['refunds:read', 'orders:read'] });
    const token = ((await read.json()) as { token: string }).token;
    expect((await v1(token, 'POST', '/refunds/', { order_id: id, amount: 10, reason: 'other' })).status).toBe(403);
    const stranger = await signUp(daemon.url, { name: 'Sid Stranger' });
    await createOrganization(stranger, 'Elsewhere');
    const res = await v1(stranger.token, 'POST', '/refunds/', { order_id: id, amount: 10, reason: 'other' });
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0].loc).toEqual(['body', 'order_id']);
    expect(await orderRow(id)).toMatchObject({ refunded_amount: 0 });
  });

  it('gives the claimed amount back when the processor refuses, and says so', async () => {
    const { id, paymentId } = await paidOrder();
    // A payment the sandbox never made: the processor refuses to refund it.
    await daemon.db('payments').where({ id: paymentId! }).update({ processor_payment_id: 'py_sandbox_5_usd_000000000000000000000000' });
    const res = await v1(owner.token, 'POST', '/refunds/', { order_id: id, amount: 500, reason: 'other' });
    expect(res.status).toBe(402);
    expect((await res.json()).detail).toContain('Nothing was refunded');
    expect(await orderRow(id)).toMatchObject({ status: 'paid', refunded_amount: 0, refunded_tax_amount: 0, refundable_amount: 1000 });
    const [failed] = (await polarSdk(daemon.url, owner.token).refunds.list({ orderId: id })).result.items;
    expect(failed).toMatchObject({ status: 'failed', amount: 500 });
    expect((await polarSdk(daemon.url, owner.token).refunds.list({ orderId: id, succeeded: true })).result.items).toHaveLength(0);
  });

  it('never refunds more than was paid when 50 refunds race on one order', async () => {
    const { id } = await paidOrder({ amount: 1000, taxAmount: 0 });
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => v1(owner.token, 'POST', '/refunds/', { order_id: id, amount: 30, reason: 'customer_request' })),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.every((status) => status === 201 || status === 422 || status === 409), String(statuses)).toBe(true);
    const succeeded = statuses.filter((status) => status === 201).length;
    expect(succeeded).toBe(33);
    const order = await orderRow(id);
    expect(order).toMatchObject({ status: 'partially_refunded', refunded_amount: 990, refundable_amount: 10 });
    const refunds = (await polarSdk(daemon.url, owner.token).refunds.list({ orderId: id, limit: 100 })).result.items;
    expect(refunds.reduce((sum, refund) => sum + refund.amount, 0)).toBe(990);
    // And the last 10 still go through.
    expect((await v1(owner.token, 'POST', '/refunds/', { order_id: id, amount: 10, reason: 'other' })).status).toBe(201);
    expect(await orderRow(id)).toMatchObject({ status: 'refunded', refunded_amount: 1000 });
  });
});

describe('GET /v1/refunds', () => {
  it('lists refunds by order, customer and outcome, sorted, through the SDK', async () => {
    const polar = polarSdk(daemon.url, owner.token);
    const other = await polar.customers.create({ email: `eve-${Date.now()}@example.com`, organizationId, externalId: `eve-${Date.now()}` });
    const { id } = await paidOrder({ customerId: other.id });
    await polar.refunds.create({ orderId: id, amount: 100, reason: 'other' });
    await polar.refunds.create({ orderId: id, amount: 300, reason: 'other' });
    const byCustomer = await polar.refunds.list({ customerId: other.id, sorting: ['-amount'] });
    expect(byCustomer.result.items.map((r) => r.amount)).toEqual([300, 100]);
    expect((await polar.refunds.list({ externalCustomerId: other.externalId!, sorting: ['amount'] })).result.items.map((r) => r.amount)).toEqual([100, 300]);
    expect((await polar.refunds.list({ orderId: id, succeeded: true })).result.pagination.totalCount).toBe(2);
    const stranger = await signUp(daemon.url, { name: 'Nosy' });
    const res = await v1(stranger.token, 'GET', `/refunds/?order_id=${id}`);
    expect((await res.json()).items).toEqual([]);
  });
});

describe('a refund of a real sandbox checkout', () => {
  it('pays a checkout with a test token, refunds half through the SDK, then the rest revoking the benefit', async () => {
    const polar = polarSdk(daemon.url, owner.token);
    const benefit = await polar.benefits.create({ organizationId, type: 'custom', description: 'Private forum', properties: { note: 'Welcome' } } as never);
    const product = await polar.products.create({ organizationId, name: 'Workshop', prices: [{ amountType: 'fixed', priceAmount: 3000, priceCurrency: 'usd' }] });
    await polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [benefit.id] } });
    const checkout = await polar.checkouts.create({ products: [product.id], customerEmail: `buyer-${Date.now()}@example.com` });
    await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'US', state: 'NY' } } });

    const [order] = (await polar.orders.list({ checkoutId: checkout.id })).result.items;
    expect(order).toMatchObject({ status: 'paid', totalAmount: order!.netAmount + order!.taxAmount, refundableAmount: 3000 });
    const half = await polar.refunds.create({ orderId: order!.id, amount: 1500, reason: 'customer_request' });
    expect(half).toMatchObject({ status: 'succeeded', amount: 1500 });
    expect((await polar.orders.get({ id: order!.id })).status).toBe('partially_refunded');
    const grants = async () => (await polar.benefits.grants({ id: benefit.id })).result.items;
    expect((await grants()).map((grant) => grant.isGranted)).toEqual([true]);

    await polar.refunds.create({ orderId: order!.id, amount: 1500, reason: 'customer_request', revokeBenefits: true });
    const refunded = await polar.orders.get({ id: order!.id });
    expect(refunded).toMatchObject({ status: 'refunded', refundedAmount: 3000, refundedTaxAmount: order!.taxAmount, refundableAmount: 0 });
    expect((await grants()).map((grant) => grant.isRevoked)).toEqual([true]);
  });
});

describe('/openapi.json', () => {
  it('describes the orders and refunds operations with their scopes', async () => {
    const document = await (await fetch(`${daemon.url}/openapi.json`)).json();
    expect(Object.keys(document.paths['/v1/orders'])).toEqual(['get']);
    expect(Object.keys(document.paths['/v1/orders/{id}'])).toEqual(['get', 'patch']);
    expect(Object.keys(document.paths['/v1/orders/{id}/invoice'])).toEqual(['post', 'get']);
    expect(Object.keys(document.paths['/v1/refunds'])).toEqual(['get', 'post']);
    expect(JSON.stringify(document.paths['/v1/refunds'].post.requestBody)).toContain('"revoke_benefits"');
    expect(document.paths['/v1/refunds'].post['x-scopes']).toEqual(['refunds:write']);
    expect(document.paths['/v1/orders/{id}'].patch['x-scopes']).toEqual(['orders:write']);
  });
});
