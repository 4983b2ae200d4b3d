import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Json, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Pia Product' });
  organizationId = await createOrganization(owner, 'Benefit Changes');
});
afterAll(() => daemon?.close());

const call = (method: string, path: string, body?: unknown) => v1Json(daemon.url, owner.token, method, path, body);

/** Pays a checkout of `productId` in the sandbox; answers the customer's id. */
async function buy(productId: string, email: string): Promise<string> {
  const checkout = await polarSdk(daemon.url, owner.token).checkouts.create({ products: [productId], customerEmail: email });
  await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'US', state: 'NY' } } });
  const paid = await polarSdk(daemon.url, owner.token).checkouts.get({ id: checkout.id });
  expect(paid.status).toBe('succeeded');
  return paid.customerId!;
}

/** The customer's grants as the API lists them: benefit id → granted or not. */
async function grantsOf(customerId: string): Promise<Record<string, boolean>> {
  const page = await call('GET', `/benefit-grants/?customer_id=${customerId}&limit=100`);
  return Object.fromEntries(page.items.map((g: { benefit_id: string; is_granted: boolean }) => [g.benefit_id, g.is_granted]));
}

const grantEvents = async (type: 'benefit_grant.created' | 'benefit_grant.revoked', benefitId: string) =>
  (await listEvents(daemon.db, organizationId, { type })).filter((e) => (e.payload.data as { benefit_id: string }).benefit_id === benefitId);

const custom = (description: string) => call('POST', '/benefits/', { organization_id: organizationId, type: 'custom', description, properties: { note: description } });

describe('POST /v1/products/{id}/benefits for a product customers already hold', () => {
  it('grants an added benefit to active subscriptions and revokes a removed one, leaving ended subscriptions without', async () => {
    const chat = await custom('Chat');
    const calls = await custom('Calls');
    const plan = await call('POST', '/products/', { organization_id: organizationId, name: 'Team', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }] });
    await call('POST', `/products/${plan.id}/benefits`, { benefits: [chat.id] });
    const member = await buy(plan.id, 'member@example.com');
    const leaver = await buy(plan.id, 'leaver@example.com');
    const [leaving] = (await call('GET', `/subscriptions/?customer_id=${leaver}`)).items;
    await call('DELETE', `/subscriptions/${leaving.id}`);
    expect(await grantsOf(member)).toEqual({ [chat.id]: true });

    const answer = await call('POST', `/products/${plan.id}/benefits`, { benefits: [calls.id] });
    expect(answer.benefits.map((b: { id: string }) => b.id)).toEqual([calls.id]);

    await expect.poll(() => grantsOf(member), { timeout: 15_000 }).toEqual({ [chat.id]: false, [calls.id]: true });
    expect(await grantsOf(leaver)).toEqual({ [chat.id]: false });
    expect((await grantEvents('benefit_grant.created', calls.id)).map((e) => (e.payload.data as { customer_id: string }).customer_id)).toEqual([member]);
    // Revoked once by the change (the leaver's was revoked with its subscription, before).
    const revokedChat = (await grantEvents('benefit_grant.revoked', chat.id)).map((e) => (e.payload.data as { customer_id: string }).customer_id);
    expect(revokedChat.sort()).toEqual([leaver, member].sort());
  });

  it('grants an added benefit to paid one-time orders, except an order whose refund took its benefits back', async () => {
    const guide = await custom('Guide');
    const bonus = await custom('Bonus');
    const book = await call('POST', '/products/', { organization_id: organizationId, name: 'Book', prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] });
    await call('POST', `/products/${book.id}/benefits`, { benefits: [guide.id] });
    const reader = await buy(book.id, 'reader@example.com');
    const returner = await buy(book.id, 'returner@example.com');
    const [order] = (await call('GET', `/orders/?customer_id=${returner}`)).items;
    await call('POST', '/refunds/', { order_id: order.id, amount: order.net_amount, reason: 'customer_request', revoke_benefits: true });

    await call('POST', `/products/${book.id}/benefits`, { benefits: [guide.id, bonus.id] });

    await expect.poll(() => grantsOf(reader), { timeout: 15_000 }).toEqual({ [guide.id]: true, [bonus.id]: true });
    expect(await grantsOf(returner)).toEqual({ [guide.id]: false });
    expect(await grantEvents('benefit_grant.revoked', guide.id)).toHaveLength(1);
  });

  it('changes no grant when the benefits are only reordered', async () => {
    const first = await custom('First');
    const second = await custom('Second');
    const kit = await call('POST', '/products/', { organization_id: organizationId, name: 'Kit', prices: [{ amount_type: 'fixed', price_amount: 500, price_currency: 'usd' }] });
    await call('POST', `/products/${kit.id}/benefits`, { benefits: [first.id, second.id] });
    const owner1 = await buy(kit.id, 'kit@example.com');
    expect(await grantsOf(owner1)).toEqual({ [first.id]: true, [second.id]: true });
    const before = (await listEvents(daemon.db, organizationId, {})).filter((e) => e.payload.type.startsWith('benefit_grant.')).length;

    await call('POST', `/products/${kit.id}/benefits`, { benefits: [second.id, first.id] });

    expect(await daemon.db('jobs').where({ kind: 'product.update_benefit_grants', subject_id: kit.id }).first()).toBeUndefined();
    expect((await listEvents(daemon.db, organizationId, {})).filter((e) => e.payload.type.startsWith('benefit_grant.')).length).toBe(before);
  });

  it('answers 422 for a benefit of another organization and schedules nothing', async () => {
    const other = await createOrganization(owner, 'Elsewhere');
    const foreign = await v1Json(daemon.url, owner.token, 'POST', '/benefits/', { organization_id: other, type: 'custom', description: 'Foreign', properties: {} });
    const product = await call('POST', '/products/', { organization_id: organizationId, name: 'Solo', prices: [{ amount_type: 'fixed', price_amount: 500, price_currency: 'usd' }] });
    const res = await v1Request(daemon.url, owner.token, 'POST', `/products/${product.id}/benefits`, { benefits: [foreign.id] });
    expect(res.status).toBe(422);
    expect(await daemon.db('jobs').where({ kind: 'product.update_benefit_grants', subject_id: product.id }).first()).toBeUndefined();
  });
});
