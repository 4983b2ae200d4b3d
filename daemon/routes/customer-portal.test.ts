import { createHash } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { AlreadyCanceledSubscription } from '@polar-sh/sdk/models/errors/alreadycanceledsubscription.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { PaymentMethodInUseByActiveSubscription } from '@polar-sh/sdk/models/errors/paymentmethodinusebyactivesubscription.js';
import { PaymentMethodSetupFailed } from '@polar-sh/sdk/models/errors/paymentmethodsetupfailed.js';
import { ResponseValidationError } from '@polar-sh/sdk/models/errors/responsevalidationerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import { previewCustomerPlanChange } from '../../core/billing/customer-sessions/subscription-update.js';
import { refreshedCustomerMeter } from '../../core/metering/testing.js';
import { savePaymentMethod } from '../../core/payments/repository.js';
import { listEvents } from '../../core/webhooks/outbox.js';
import { listOutboxMail } from '../../core/mail/mailer.js';
import { PORTAL_ROUTES, V1_ROUTES } from '../http/v1/router.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { uploadDownloadable } from '../testing/benefit-grants.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

// Customer sessions and the customer portal API, driven by @polar-sh/sdk 0.49 with response validation on: a seller
// opens a session for one customer, and that session sees exactly that customer of that organization.

let daemon: TestDaemon;
let owner: SignedIn;
let stranger: SignedIn;
let orgX: string;
let orgY: string;
let productX: string;
let sellerX: Polar;
/** A Polar client with no seller credentials: the portal calls pass the customer session per call, as the SDK does. */
let portal: Polar;

interface Bought {
  customerId: string;
  orderId: string;
  subscriptionId: string;
  grantIds: string[];
  licenseKeyId: string;
  customerMeterId: string;
  paymentMethodId: string;
}
let ada: Bought;
let bob: Bought;
let yuri: Bought;
let adaToken: string;

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

/** A monthly product with a license key, a downloadable file and a custom note, bought through the sandbox checkout. */
async function shop(seller: Polar, organizationId: string, tag: string) {
  const fileId = await uploadDownloadable(daemon, seller === sellerX ? owner.token : stranger.token, organizationId, Buffer.from(`manual of ${tag}`), `${tag}.pdf`);
  const keys = await seller.benefits.create({ organizationId, type: 'license_keys', description: `${tag} licence`, properties: { prefix: tag } } as never);
  const files = await seller.benefits.create({ organizationId, type: 'downloadables', description: `${tag} manual`, properties: { files: [fileId] } } as never);
  const note = await seller.benefits.create({ organizationId, type: 'custom', description: `${tag} support`, properties: { note: 'Mail us' } } as never);
  const product = await seller.products.create({ organizationId, name: `${tag} Pro`, recurringInterval: 'month', metadata: { secret: 'seller-only' }, prices: [{ amountType: 'fixed', priceAmount: 1200 }] } as never);
  await seller.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [keys.id, files.id, note.id] } });
  await seller.meters.create({ organizationId, name: `${tag} API calls`, filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api_call' }] }, aggregation: { func: 'count' } });
  return product.id;
}

async function buy(seller: Polar, organizationId: string, productId: string, email: string, externalId: string, card = 'tok_visa'): Promise<Bought> {
  const customer = await seller.customers.create({ organizationId, email, name: email.split('@')[0], externalId });
  const checkout = await seller.checkouts.create({ products: [productId], customerId: customer.id });
  await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: card, customerBillingAddress: { country: 'FR' } } });
  const done = await seller.checkouts.get({ id: checkout.id });
  expect(done.status).toBe('succeeded');
  const order = await daemon.db('orders').where({ checkout_id: checkout.id }).first();
  const grants = (await seller.benefitGrants.list({ customerId: customer.id })).result.items;
  const [key] = (await seller.licenseKeys.list({ organizationId })).result.items.filter((k) => k.customerId === customer.id);
  // Usage on the organization's meter (created by shop()), counted now rather than by the background refresh.
  await seller.events.ingest({ events: [1, 2].map(() => ({ name: 'api_call', customerId: customer.id, organizationId })) });
  const customerMeterId = await refreshedCustomerMeter(daemon.db, organizationId, customer.id);
  const method = await daemon.db('payment_methods').where({ customer_id: customer.id }).first();
  return { customerId: customer.id, orderId: String(order.id), subscriptionId: done.subscriptionId!, grantIds: grants.map((g) => g.id), licenseKeyId: key?.id ?? 'no license key', customerMeterId, paymentMethodId: String(method.id) };
}

async function sessionFor(seller: Polar, customerId: string) {
  return (await seller.customerSessions.create({ customerId, returnUrl: 'https://shop.example/account' })).token;
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Paula Portal' });
  stranger = await signUp(daemon.url, { name: 'Yann Elsewhere' });
  orgX = await createOrganization(owner, 'Portal Shop');
  orgY = await createOrganization(stranger, 'Other Shop');
  sellerX = polarSdk(daemon.url, owner.token);
  const sellerY = polarSdk(daemon.url, stranger.token);
  portal = new Polar({ serverURL: daemon.url });
  productX = await shop(sellerX, orgX, 'alpha');
  const productY = await shop(sellerY, orgY, 'omega');
  ada = await buy(sellerX, orgX, productX, 'ada@example.test', 'user-ada');
  bob = await buy(sellerX, orgX, productX, 'bob@example.test', 'user-bob');
  // The same person (same email, same external id) buying from another organization is another customer.
  yuri = await buy(sellerY, orgY, productY, 'ada@example.test', 'user-ada');
  adaToken = await sessionFor(sellerX, ada.customerId);
});
afterAll(async () => {
  for (const line of daemon?.logs ?? []) if (line.err) console.error(JSON.stringify(line.err).slice(0, 3000));
  await daemon?.close();
});

describe('POST /v1/customer-sessions', () => {
  it('opens an hour-long session for a customer by id, in the CustomerSession shape the SDK validates, keeping only the token’s hash', async () => {
    const before = Date.now();
    const session = await sellerX.customerSessions.create({ customerId: ada.customerId, returnUrl: 'https://shop.example/account' });
    expect(session).toMatchObject({ customerId: ada.customerId, returnUrl: 'https://shop.example/account', customer: { id: ada.customerId, email: 'ada@example.test', externalId: 'user-ada' } });
    expect(session.token).toMatch(/^till_cst_[A-Za-z0-9_-]{40,}$/);
    const lifetime = session.expiresAt.getTime() - before;
    expect(lifetime).toBeGreaterThan(59 * 60 * 1000);
    expect(lifetime).toBeLessThanOrEqual(61 * 60 * 1000);
    const url = new URL(session.customerPortalUrl);
    expect(url.origin).toBe(new URL(daemon.url).origin);
    expect(url.pathname).toMatch(/^\/portal\/portal-shop-/);
    expect(url.searchParams.get('customer_session_token')).toBe(session.token);
    expect(url.searchParams.get('email')).toBe('ada@example.test');
    const row = await daemon.db('customer_sessions').where({ id: session.id }).first();
    expect(row.token_hash).toBe(createHash('sha256').update(session.token).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(session.token);
  });

  it('opens a session by external customer id, with no return URL', async () => {
    const session = await sellerX.customerSessions.create({ externalCustomerId: 'user-bob' });
    expect(session).toMatchObject({ customerId: bob.customerId, returnUrl: null });
  });

  it('answers 422 on the field that named a customer the caller cannot reach (unknown, or another organization’s)', async () => {
    for (const body of [{ customer_id: '00000000-0000-4000-8000-000000000000' }, { customer_id: yuri.customerId }, { external_customer_id: 'nobody' }]) {
      const res = await v1(owner.token, 'POST', '/customer-sessions/', body);
      expect(res.status).toBe(422);
      expect((await res.json()).detail[0]).toMatchObject({ loc: ['body', Object.keys(body)[0]], msg: 'Customer does not exist.' });
    }
    await expect(sellerX.customerSessions.create({ customerId: yuri.customerId })).rejects.toBeInstanceOf(HTTPValidationError);
  });

  it('needs customer_sessions:write from an organization access token', async () => {
    const mint = async (scopes: string[]) => (await (await v1(owner.token, 'POST', '/organization-access-tokens/', { organization_id: orgX, comment: 'portal', scopes })).json()).token as string;
    const readOnly = await mint(['customers:read', 'customers:write']);
    expect((await v1(readOnly, 'POST', '/customer-sessions/', { customer_id: ada.customerId })).status).toBe(403);
    const writer = polarSdk(daemon.url, await mint(['customer_sessions:write']));
    expect((await writer.customerSessions.create({ customerId: ada.customerId })).customerId).toBe(ada.customerId);
    expect((await v1(undefined, 'POST', '/customer-sessions/', { customer_id: ada.customerId })).status).toBe(401);
  });
});

describe('/v1/customer-portal as the session’s customer, through the SDK', () => {
  const security = () => ({ customerSession: adaToken });

  it('introspects the session and names its customer', async () => {
    expect(await portal.customerPortal.customerSession.introspect(security())).toMatchObject({ returnUrl: 'https://shop.example/account' });
    expect(await portal.customerPortal.customerSession.getAuthenticatedUser(security())).toMatchObject({ type: 'customer', customerId: ada.customerId, email: 'ada@example.test' });
  });

  it('gets the customer (me)', async () => {
    const me = await portal.customerPortal.customers.get(security());
    expect(me).toMatchObject({ id: ada.customerId, email: 'ada@example.test', name: 'ada', oauthAccounts: {} });
    const raw = await (await v1(adaToken, 'GET', '/customer-portal/customers/me')).json();
    expect(raw).not.toHaveProperty('metadata');
    expect(raw).not.toHaveProperty('external_id');
  });

  it('lists and gets the customer’s orders, with the product as the customer sees it', async () => {
    const list = await portal.customerPortal.orders.list(security(), {});
    expect(list.result.items.map((o) => o.id)).toEqual([ada.orderId]);
    expect(list.result.pagination).toEqual({ totalCount: 1, maxPage: 1 });
    const order = await portal.customerPortal.orders.get(security(), { id: ada.orderId });
    expect(order).toMatchObject({ id: ada.orderId, customerId: ada.customerId, status: 'paid', totalAmount: 1200, subscriptionId: ada.subscriptionId, product: { name: 'alpha Pro', organization: { id: orgX } } });
    expect(order.product!.benefits.map((b) => b.type).sort()).toEqual(['custom', 'downloadables', 'license_keys']);
    const raw = JSON.stringify(await (await v1(adaToken, 'GET', `/customer-portal/orders/${ada.orderId}`)).json());
    expect(raw).not.toContain('seller-only');
    expect(raw).not.toContain('Mail us');
  });

  it('lists and gets the customer’s subscriptions', async () => {
    const list = await portal.customerPortal.subscriptions.list(security(), {});
    expect(list.result.items.map((s) => s.id)).toEqual([ada.subscriptionId]);
    expect((await portal.customerPortal.subscriptions.list(security(), { active: false })).result.items).toEqual([]);
    const subscription = await portal.customerPortal.subscriptions.get(security(), { id: ada.subscriptionId });
    expect(subscription).toMatchObject({ id: ada.subscriptionId, customerId: ada.customerId, status: 'active', amount: 1200, recurringInterval: 'month', product: { name: 'alpha Pro' } });
  });

  it('lists and gets the customer’s benefit grants, with what of each benefit a subscriber may see', async () => {
    const list = await portal.customerPortal.benefitGrants.list(security(), {});
    expect(list.result.items.map((g) => g.id).sort()).toEqual([...ada.grantIds].sort());
    const custom = list.result.items.find((g) => g.benefit.type === 'custom')!;
    expect(custom.benefit.properties).toEqual({ note: 'Mail us' });
    const grant = await portal.customerPortal.benefitGrants.get(security(), { id: ada.grantIds[0]! });
    expect(grant).toMatchObject({ id: ada.grantIds[0], customerId: ada.customerId, isGranted: true, customer: { id: ada.customerId } });
  });

  it('lists and gets the customer’s license keys with their activations', async () => {
    const list = await portal.customerPortal.licenseKeys.list(security(), {});
    expect(list.result.items.map((k) => k.id)).toEqual([ada.licenseKeyId]);
    const key = await portal.customerPortal.licenseKeys.get(security(), { id: ada.licenseKeyId });
    expect(key).toMatchObject({ id: ada.licenseKeyId, customerId: ada.customerId, status: 'granted', activations: [] });
    expect(key.key).toMatch(/^ALPHA-/);
  });

  it('gets a portal’s organization by slug without credentials, with its public products only', async () => {
    const slug = (await sellerX.organizations.get({ id: orgX })).slug;
    await sellerX.products.create({ organizationId: orgX, name: 'Hidden', visibility: 'private', prices: [{ amountType: 'fixed', priceAmount: 100 }] } as never);
    const data = await portal.customerPortal.organizations.get({ slug });
    expect(data.organization).toMatchObject({ id: orgX, slug, name: 'Portal Shop' });
    expect(data.products.map((p) => p.name)).toEqual(['alpha Pro']);
    expect(data.products[0]!.benefits.map((b) => b.type).sort()).toEqual(['custom', 'downloadables', 'license_keys']);
    expect(JSON.stringify(data)).not.toContain('seller-only');
    expect((await v1(undefined, 'GET', '/customer-portal/organizations/no-such-shop')).status).toBe(404);
  });

  it('lists the customer’s downloadables with signed links that serve the file', async () => {
    const list = await portal.customerPortal.downloadables.list(security(), {});
    expect(list.result.items).toHaveLength(1);
    const [downloadable] = list.result.items;
    expect(downloadable!.file.name).toBe('alpha.pdf');
    const res = await fetch(downloadable!.file.download.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('manual of alpha');
  });
});

describe('/v1/customer-portal writes as the session’s customer, through the SDK', () => {
  const security = () => ({ customerSession: adaToken });
  const eventTypes = async (subscriptionId: string) =>
    (await listEvents(daemon.db, orgX)).filter((e) => e.payload.type.startsWith('subscription.') && (e.payload.data as { id: string }).id === subscriptionId).map((e) => e.payload.type);

  it('cancels a subscription at the period end with a reason and comment, uncancels it, and cancels it again, with the seller’s events', async () => {
    const id = ada.subscriptionId;
    const before = await eventTypes(id);
    const canceled = await portal.customerPortal.subscriptions.update(security(), {
      id,
      customerSubscriptionUpdate: { cancelAtPeriodEnd: true, cancellationReason: 'too_expensive', cancellationComment: 'Pricey for me' },
    });
    expect(canceled).toMatchObject({ id, status: 'active', cancelAtPeriodEnd: true, customerCancellationReason: 'too_expensive', customerCancellationComment: 'Pricey for me', product: { name: 'alpha Pro' } });
    expect(canceled.endsAt).toEqual(canceled.currentPeriodEnd);
    expect(canceled.canceledAt).not.toBeNull();
    // The seller sees the customer's cancellation as its own.
    expect(await sellerX.subscriptions.get({ id })).toMatchObject({ cancelAtPeriodEnd: true, customerCancellationReason: 'too_expensive', customerCancellationComment: 'Pricey for me' });

    const uncanceled = await portal.customerPortal.subscriptions.update(security(), { id, customerSubscriptionUpdate: { cancelAtPeriodEnd: false } });
    expect(uncanceled).toMatchObject({ id, status: 'active', cancelAtPeriodEnd: false, canceledAt: null, endsAt: null, customerCancellationReason: null, customerCancellationComment: null });

    const again = await portal.customerPortal.subscriptions.cancel(security(), { id });
    expect(again).toMatchObject({ id, status: 'active', cancelAtPeriodEnd: true, customerCancellationReason: null });
    expect(again.endsAt).toEqual(again.currentPeriodEnd);

    expect((await eventTypes(id)).slice(before.length)).toEqual([
      'subscription.updated', 'subscription.canceled',
      'subscription.updated', 'subscription.uncanceled',
      'subscription.updated', 'subscription.canceled',
    ]);
    // Back as it was, for the tests after this one.
    await portal.customerPortal.subscriptions.update(security(), { id, customerSubscriptionUpdate: { cancelAtPeriodEnd: false } });
  });

  it('refuses to cancel an ended subscription, and a reason that is not one of SPEC §4’s', async () => {
    const res = await v1(adaToken, 'PATCH', `/customer-portal/subscriptions/${ada.subscriptionId}`, { cancel_at_period_end: true, cancellation_reason: 'bored' });
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0].loc).toEqual(['body', 'cancellation_reason']);
    const bobToken = await sessionFor(sellerX, bob.customerId);
    await sellerX.subscriptions.revoke({ id: bob.subscriptionId });
    await expect(portal.customerPortal.subscriptions.cancel({ customerSession: bobToken }, { id: bob.subscriptionId })).rejects.toBeInstanceOf(AlreadyCanceledSubscription);
  });

  it('updates the customer’s billing name, billing address and tax ID, as the seller then sees them, with customer.updated', async () => {
    const updatedEvents = async () =>
      (await listEvents(daemon.db, orgX)).filter((e) => e.payload.type === 'customer.updated' && (e.payload.data as { id: string }).id === ada.customerId).length;
    const before = await updatedEvents();
    const me = await portal.customerPortal.customers.update(security(), {
      billingName: 'Ada Lovelace SARL',
      billingAddress: { country: 'FR', line1: '1 rue de la Paix', city: 'Paris', postalCode: '75002' },
      taxId: 'FR61954506077',
    });
    expect(me).toMatchObject({ id: ada.customerId, name: 'ada', email: 'ada@example.test', billingName: 'Ada Lovelace SARL', billingAddress: { country: 'FR', line1: '1 rue de la Paix', city: 'Paris', postalCode: '75002' }, taxId: ['FR61954506077', 'eu_vat'] });
    expect(await sellerX.customers.get({ id: ada.customerId })).toMatchObject({ billingName: 'Ada Lovelace SARL', billingAddress: { city: 'Paris' }, taxId: ['FR61954506077', 'eu_vat'] });
    expect(await updatedEvents()).toBe(before + 1);
    // Only what is sent changes; a null billing name falls back to the name, a null tax ID clears it.
    expect(await portal.customerPortal.customers.update(security(), { billingName: null, taxId: null })).toMatchObject({ billingName: 'ada', taxId: null, billingAddress: { city: 'Paris' } });
    expect(await portal.customerPortal.customers.get(security())).toMatchObject({ billingName: 'ada', taxId: null, billingAddress: { city: 'Paris' } });
    // Bob, of the same organization, is untouched.
    expect(await sellerX.customers.get({ id: bob.customerId })).toMatchObject({ billingName: 'bob', taxId: null });
  });

  it('refuses a tax ID not of the billing country, a billing address taken away, and fields the customer may not change, with 422', async () => {
    for (const [body, field] of [
      [{ tax_id: '12345' }, 'tax_id'],
      [{ billing_address: null }, 'billing_address'],
    ] as const) {
      const res = await v1(adaToken, 'PATCH', '/customer-portal/customers/me', body);
      expect([res.status, field]).toEqual([422, field]);
      expect((await res.json()).detail[0].loc).toEqual(['body', field]);
    }
    for (const body of [{ email: 'other@example.test' }, { default_payment_method_id: 'pm_1' }]) {
      expect((await v1(adaToken, 'PATCH', '/customer-portal/customers/me', body)).status).toBe(422);
    }
    await expect(portal.customerPortal.customers.update(security(), { taxId: '12345' })).rejects.toBeInstanceOf(HTTPValidationError);
    expect((await portal.customerPortal.customers.get(security())).email).toBe('ada@example.test');
  });

  it('answers 404 to a cancel or uncancel of another customer’s subscription, and changes nothing', async () => {
    for (const other of [bob, yuri]) {
      await expect(portal.customerPortal.subscriptions.cancel(security(), { id: other.subscriptionId })).rejects.toBeInstanceOf(ResourceNotFound);
      await expect(portal.customerPortal.subscriptions.update(security(), { id: other.subscriptionId, customerSubscriptionUpdate: { cancelAtPeriodEnd: true } })).rejects.toBeInstanceOf(ResourceNotFound);
    }
    const row = await daemon.db('subscriptions').where({ id: yuri.subscriptionId }).first();
    expect(Boolean(row.cancel_at_period_end)).toBe(false);
  });
});

describe('/v1/customer-portal plan changes, through the SDK', () => {
  const monthly = async (name: string, amount: number, visibility = 'public') =>
    (await sellerX.products.create({ organizationId: orgX, name, visibility, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: amount }] } as never)).id;
  const settings = (body: Record<string, unknown>) => v1(owner.token, 'PATCH', `/organizations/${orgX}`, body);
  const principal = (customerId: string) => ({ sessionId: 'preview', organizationId: orgX, customerId, expiresAt: new Date(Date.now() + 60_000), returnUrl: null });
  const previewDeps = () => ({ db: daemon.db, clock: systemClock });
  const subscriptionEvents = async (id: string) =>
    (await listEvents(daemon.db, orgX)).filter((e) => e.payload.type.startsWith('subscription.') && (e.payload.data as { id: string }).id === id).map((e) => e.payload.type);
  /** Proration runs on the clock, which moves between a preview and the change: each line may round one unit apart. */
  const near = (actual: number, expected: number) => expect(Math.abs(actual - expected), `${actual} vs ${expected}`).toBeLessThanOrEqual(2);

  it('previews the prorated amount of a change of plan, then changes plan with the organization’s proration behaviour (prorate, then invoice)', async () => {
    const max = await monthly('alpha Max', 2400);
    const ultra = await monthly('alpha Ultra', 3600);
    const cleo = await buy(sellerX, orgX, productX, 'cleo@example.test', 'user-cleo');
    const security = { customerSession: await sessionFor(sellerX, cleo.customerId) };
    const id = cleo.subscriptionId;

    // prorate (the default): the difference waits for the next renewal; nothing is charged now.
    const preview = await previewCustomerPlanChange(previewDeps(), principal(cleo.customerId), id, max);
    expect(preview).toMatchObject({ subscriptionId: id, productId: max, currency: 'usd', prorationBehavior: 'prorate', amount: 2400, dueNow: null });
    expect(preview.lines.map((line) => line.label)).toEqual(['Remaining time on alpha Max', 'Unused time on alpha Pro']);
    expect(preview.lines[0]!.amount).toBeGreaterThan(2300);
    expect(preview.lines[1]!.amount).toBeLessThan(-1100);
    expect(preview.nextRenewalAdjustment).toBe(preview.lines[0]!.amount + preview.lines[1]!.amount);
    // A preview changes nothing.
    expect(await sellerX.subscriptions.get({ id })).toMatchObject({ productId: productX, amount: 1200 });

    const before = (await subscriptionEvents(id)).length;
    const moved = await portal.customerPortal.subscriptions.update(security, { id, customerSubscriptionUpdate: { productId: max } });
    expect(moved).toMatchObject({ id, productId: max, amount: 2400, status: 'active', product: { name: 'alpha Max' } });
    expect(moved.prices.map((price) => price.id)).toEqual((await sellerX.products.get({ id: max })).prices.map((price) => price.id));
    expect((await subscriptionEvents(id)).slice(before)).toEqual(['subscription.updated']);
    const row = await daemon.db('subscriptions').where({ id }).first();
    const pending = (typeof row.pending_items === 'string' ? JSON.parse(row.pending_items) : row.pending_items) as { amount: number }[];
    near(pending.reduce((sum, item) => sum + item.amount, 0), preview.nextRenewalAdjustment);
    expect(await daemon.db('orders').where({ subscription_id: id, billing_reason: 'subscription_update' })).toEqual([]);

    // invoice: an upgrade is charged at once on an order of its own, as previewed, on the card the subscription is paid with.
    expect((await settings({ subscription_settings: { proration_behavior: 'invoice' } })).status).toBe(200);
    const invoiced = await previewCustomerPlanChange(previewDeps(), principal(cleo.customerId), id, ultra);
    expect(invoiced).toMatchObject({ prorationBehavior: 'invoice', amount: 3600, nextRenewalAdjustment: 0 });
    expect(invoiced.dueNow!.totalAmount).toBeGreaterThan(1100);
    const upgraded = await portal.customerPortal.subscriptions.update(security, { id, customerSubscriptionUpdate: { productId: ultra } });
    expect(upgraded).toMatchObject({ productId: ultra, amount: 3600 });
    const orders = await daemon.db('orders').where({ subscription_id: id, billing_reason: 'subscription_update' });
    expect(orders).toHaveLength(1);
    expect(orders[0]).toMatchObject({ status: 'paid' });
    near(Number(orders[0].total_amount), invoiced.dueNow!.totalAmount);
    expect((await portal.customerPortal.orders.list(security, {})).result.items.map((order) => order.billingReason).sort()).toEqual(['subscription_create', 'subscription_update']);
    expect((await settings({ subscription_settings: { proration_behavior: 'prorate' } })).status).toBe(200);
  });

  it('refuses a change of plan the organization does not allow with 403, in the preview too, and changes nothing', async () => {
    const max = await monthly('alpha Max II', 2400);
    const dan = await buy(sellerX, orgX, productX, 'dan@example.test', 'user-dan');
    const token = await sessionFor(sellerX, dan.customerId);
    for (const body of [{ subscription_settings: { allow_customer_updates: false } }, { customer_portal_settings: { subscription: { update_plan: false, update_seats: true } } }]) {
      expect((await settings(body)).status).toBe(200);
      const res = await v1(token, 'PATCH', `/customer-portal/subscriptions/${dan.subscriptionId}`, { product_id: max });
      expect([res.status, await res.json()]).toEqual([403, expect.objectContaining({ error: 'UpdateSubscriptionPlanNotAllowed', detail: 'Updating subscription plan is not allowed.' })]);
      // Polar answers this 403 under a name SDK 0.49 does not list for the operation, so the SDK cannot parse it there either.
      await expect(portal.customerPortal.subscriptions.update({ customerSession: token }, { id: dan.subscriptionId, customerSubscriptionUpdate: { productId: max } })).rejects.toBeInstanceOf(ResponseValidationError);
      await expect(previewCustomerPlanChange(previewDeps(), principal(dan.customerId), dan.subscriptionId, max)).rejects.toMatchObject({ code: 'SUBSCRIPTION_PLAN_UPDATE_NOT_ALLOWED' });
      // Cancelling, and taking it back, stay open to the customer.
      expect((await v1(token, 'PATCH', `/customer-portal/subscriptions/${dan.subscriptionId}`, { cancel_at_period_end: true })).status).toBe(200);
      expect((await v1(token, 'PATCH', `/customer-portal/subscriptions/${dan.subscriptionId}`, { cancel_at_period_end: false })).status).toBe(200);
    }
    expect((await settings({ subscription_settings: { allow_customer_updates: true }, customer_portal_settings: { subscription: { update_plan: true, update_seats: true } } })).status).toBe(200);
    expect(await sellerX.subscriptions.get({ id: dan.subscriptionId })).toMatchObject({ productId: productX, amount: 1200 });
    const org = await portal.customerPortal.organizations.get({ slug: (await sellerX.organizations.get({ id: orgX })).slug });
    expect(org.organization).toMatchObject({
      allowCustomerUpdates: true,
      prorationBehavior: 'prorate',
      customerPortalSettings: { subscription: { updatePlan: true, updateSeats: true }, usage: { show: true } },
      organizationFeatures: { memberModelEnabled: false, checkoutLocalizationEnabled: false },
    });
  });

  it('refuses with 422 a product that is not public, the same product, and the seats, pause and resume forms Till does not serve', async () => {
    const secret = await monthly('alpha Secret', 900, 'private');
    const eve = await buy(sellerX, orgX, productX, 'eve@example.test', 'user-eve');
    const token = await sessionFor(sellerX, eve.customerId);
    for (const [body, field] of [
      [{ product_id: secret }, 'product_id'],
      [{ product_id: productX }, 'product_id'],
      [{ product_id: '00000000-0000-4000-8000-000000000000' }, 'product_id'],
      [{ seats: 3 }, 'seats'],
      [{ pause_at_period_end: true }, 'pause_at_period_end'],
      [{ resume: true }, 'resume'],
      [{}, undefined],
    ] as const) {
      const res = await v1(token, 'PATCH', `/customer-portal/subscriptions/${eve.subscriptionId}`, body);
      const answer = await res.json();
      expect([res.status, JSON.stringify(body)]).toEqual([422, JSON.stringify(body)]);
      expect(answer.detail[0].loc).toEqual(field ? ['body', field] : ['body']);
    }
    await expect(portal.customerPortal.subscriptions.update({ customerSession: token }, { id: eve.subscriptionId, customerSubscriptionUpdate: { seats: 3 } })).rejects.toBeInstanceOf(HTTPValidationError);
    // Nothing is pending in Till (a change applies at once), so clearing a pending update answers the subscription as it is.
    expect(await portal.customerPortal.subscriptions.update({ customerSession: token }, { id: eve.subscriptionId, customerSubscriptionUpdate: { pendingUpdate: null } })).toMatchObject({ id: eve.subscriptionId, productId: productX });
    expect(await sellerX.subscriptions.get({ id: eve.subscriptionId })).toMatchObject({ productId: productX, amount: 1200 });
  });
});

describe('/v1/customer-portal orders, meters and list filters, through the SDK', () => {
  const security = () => ({ customerSession: adaToken });

  it('changes an order’s billing details, generates its invoice, and links its invoice and receipt PDFs, with order.updated', async () => {
    const id = ada.orderId;
    const updatedEvents = async () => (await listEvents(daemon.db, orgX)).filter((e) => e.payload.type === 'order.updated' && (e.payload.data as { id: string }).id === id).length;
    const before = await updatedEvents();
    const updated = await portal.customerPortal.orders.update(security(), {
      id,
      customerOrderUpdate: { billingName: 'Ada Lovelace SARL', billingAddress: { country: 'FR', line1: '3 quai Voltaire', city: 'Paris', postalCode: '75007' } },
    });
    expect(updated).toMatchObject({ id, billingName: 'Ada Lovelace SARL', billingAddress: { city: 'Paris' }, product: { name: 'alpha Pro' } });
    expect(await sellerX.orders.get({ id })).toMatchObject({ billingName: 'Ada Lovelace SARL' });
    await portal.customerPortal.orders.generateInvoice(security(), { id });
    expect((await portal.customerPortal.orders.get(security(), { id })).isInvoiceGenerated).toBe(true);
    expect(await updatedEvents()).toBeGreaterThan(before);
    for (const link of [await portal.customerPortal.orders.invoice(security(), { id }), await portal.customerPortal.orders.receipt(security(), { id })]) {
      const res = await fetch(link!.url);
      expect([res.status, res.headers.get('content-type')]).toEqual([200, 'application/pdf']);
    }
    const bad = await v1(adaToken, 'PATCH', `/customer-portal/orders/${id}`, { billing_name: 'x', total_amount: 1 });
    expect(bad.status).toBe(422);
  });

  it('tells how an order’s payment stands: succeeded, and failed with the decline after a renewal the card refused', async () => {
    expect(await portal.customerPortal.orders.getPaymentStatus(security(), { id: ada.orderId })).toEqual({ status: 'succeeded', error: null });
    // An organization of its own, whose sandbox clock moves a month on to the renewal.
    const shopId = await createOrganization(owner, 'Renewal Shop');
    expect((await v1(owner.token, 'PATCH', `/organizations/${shopId}/clock`, { sandbox: true })).status).toBe(200);
    const product = await sellerX.products.create({ organizationId: shopId, name: 'Renewing', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 500 }] } as never);
    await sellerX.meters.create({ organizationId: shopId, name: 'Renewal API calls', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api_call' }] }, aggregation: { func: 'count' } });
    const fay = await buy(sellerX, shopId, product.id, 'fay@example.test', 'user-fay', 'tok_chargeCustomerFail');
    expect((await v1(owner.token, 'POST', `/organizations/${shopId}/clock/advance`, { by: '+1month' })).status).toBe(200);
    const renewal = await daemon.db('orders').where({ subscription_id: fay.subscriptionId, billing_reason: 'subscription_cycle' }).first();
    expect(renewal).toMatchObject({ status: 'pending' });
    const token = (await sellerX.customerSessions.create({ customerId: fay.customerId })).token;
    const status = await portal.customerPortal.orders.getPaymentStatus({ customerSession: token }, { id: String(renewal.id) });
    const attempt = await daemon.db('payments').where({ order_id: renewal.id }).orderBy('created_at', 'desc').first();
    expect(attempt).toMatchObject({ status: 'failed' });
    expect(status).toEqual({ status: 'failed', error: attempt.decline_message });
    expect(status.error).toMatch(/declined|authentication/);
  });

  it('lists and gets the customer’s meters: consumed, credited and balance, with the meter’s name', async () => {
    const list = await portal.customerPortal.customerMeters.list(security(), {});
    expect(list.result.items.map((m) => m.id)).toEqual([ada.customerMeterId]);
    const meter = await portal.customerPortal.customerMeters.get(security(), { id: ada.customerMeterId });
    expect(meter).toMatchObject({ id: ada.customerMeterId, customerId: ada.customerId, consumedUnits: 2, creditedUnits: 0, balance: -2, meter: { name: 'alpha API calls' } });
    const raw = await (await v1(adaToken, 'GET', `/customer-portal/meters/${ada.customerMeterId}`)).json();
    expect(raw).not.toHaveProperty('customer');
    expect(raw.meter).not.toHaveProperty('filter');
    expect((await portal.customerPortal.customerMeters.list(security(), { meterId: meter.meterId, sorting: ['-balance'] })).result.items).toHaveLength(1);
  });

  it('applies the grant filters Polar’s portal takes, and refuses with 422 those Till cannot apply instead of ignoring them', async () => {
    const byType = await portal.customerPortal.benefitGrants.list(security(), { typeFilter: 'license_keys' });
    expect(byType.result.items.map((g) => g.benefit.type)).toEqual(['license_keys']);
    expect((await portal.customerPortal.benefitGrants.list(security(), { subscriptionId: ada.subscriptionId })).result.items).toHaveLength(3);
    expect((await portal.customerPortal.benefitGrants.list(security(), { subscriptionId: bob.subscriptionId })).result.items).toEqual([]);
    expect((await portal.customerPortal.benefitGrants.list(security(), { sorting: ['type'] })).result.items.map((g) => g.benefit.type)).toEqual(['custom', 'downloadables', 'license_keys']);
    for (const path of ['/customer-portal/orders/?query=alpha', '/customer-portal/subscriptions/?query=alpha', '/customer-portal/benefit-grants/?query=x', '/customer-portal/benefit-grants/?checkout_id=x', '/customer-portal/benefit-grants/?member_id=x', '/customer-portal/meters/?query=x']) {
      const res = await v1(adaToken, 'GET', path);
      const body = await res.json();
      expect([res.status, path]).toEqual([422, path]);
      expect(body.detail[0].loc).toEqual(['query', new URLSearchParams(path.split('?')[1]).keys().next().value]);
    }
  });
});

describe('/v1/customer-portal payment methods, through the SDK', () => {
  it('lists the customer’s saved cards, deletes one, and refuses to delete the last one backing an active subscription with 400', async () => {
    const gus = await buy(sellerX, orgX, productX, 'gus@example.test', 'user-gus');
    const security = { customerSession: await sessionFor(sellerX, gus.customerId) };
    const list = await portal.customerPortal.customers.listPaymentMethods(security, {});
    expect(list.result.items).toMatchObject([{ id: gus.paymentMethodId, customerId: gus.customerId, type: 'card', methodMetadata: { brand: 'visa', last4: '4242' } }]);
    // SDK 0.49 reads these as PaymentMethodCard, which drops is_default: it is on the wire.
    expect((await (await v1(security.customerSession, 'GET', '/customer-portal/customers/me/payment-methods')).json()).items[0]).toMatchObject({ is_default: true });
    await expect(portal.customerPortal.customers.deletePaymentMethod(security, { id: gus.paymentMethodId })).rejects.toBeInstanceOf(PaymentMethodInUseByActiveSubscription);
    expect((await portal.customerPortal.customers.listPaymentMethods(security, {})).result.items).toHaveLength(1);

    // Given a second card saved for Gus, the first may go, and the second is then the default.
    const second = await savePaymentMethod(daemon.db, {
      organizationId: orgX, customerId: gus.customerId, processor: 'sandbox', processorMethodId: 'tok_mastercard', processorCustomerId: null,
      brand: 'mastercard', last4: '4444', expMonth: 12, expYear: 2040, createdAt: new Date(Date.now() + 1000),
    });
    await portal.customerPortal.customers.deletePaymentMethod(security, { id: gus.paymentMethodId });
    expect((await portal.customerPortal.customers.listPaymentMethods(security, {})).result.items).toMatchObject([{ id: second.id, methodMetadata: { last4: '4444' } }]);
    expect((await v1(security.customerSession, 'DELETE', `/customer-portal/customers/me/payment-methods/${gus.paymentMethodId}`)).status).toBe(404);

    // Once the subscription has ended, the last card may go too.
    await sellerX.subscriptions.revoke({ id: gus.subscriptionId });
    await portal.customerPortal.customers.deletePaymentMethod(security, { id: second.id });
    expect((await portal.customerPortal.customers.listPaymentMethods(security, {})).result.items).toEqual([]);
  });

  it('adds a card through the sandbox’s setup flow: saved and made the subscriptions’ default, declined with 400, or after 3-D Secure through confirm', async () => {
    const hal = await buy(sellerX, orgX, productX, 'hal@example.test', 'user-hal');
    const security = { customerSession: await sessionFor(sellerX, hal.customerId) };
    const events = async () => (await listEvents(daemon.db, orgX)).filter((e) => (e.payload.data as { id?: string }).id === hal.customerId).map((e) => e.payload.type);
    const before = (await events()).length;
    const returnUrl = `${daemon.url}/portal/back`;

    const added = await portal.customerPortal.customers.addPaymentMethod(security, { confirmationTokenId: 'tok_mastercard', setDefault: true, returnUrl });
    expect(added).toMatchObject({ status: 'succeeded', paymentMethod: { customerId: hal.customerId, type: 'card', methodMetadata: { brand: 'mastercard', last4: '4444' } } });
    const newId = (added as { paymentMethod: { id: string } }).paymentMethod.id;
    expect((await daemon.db('subscriptions').where({ id: hal.subscriptionId }).first()).payment_method_id).toBe(newId);
    expect((await portal.customerPortal.customers.listPaymentMethods(security, {})).result.items.map((m) => m.id)).toEqual([newId, hal.paymentMethodId]);
    // As Polar on a new default: customer.updated and customer.state_changed (grant jobs may add state changes of their own).
    const emitted = (await events()).slice(before);
    expect(emitted.filter((type) => type === 'customer.updated')).toHaveLength(1);
    expect(emitted).toContain('customer.state_changed');

    // A card that declines is Polar's 400 PaymentMethodSetupFailed, and nothing is saved.
    const declined = portal.customerPortal.customers.addPaymentMethod(security, { confirmationTokenId: 'tok_chargeDeclined', setDefault: true, returnUrl });
    await expect(declined).rejects.toBeInstanceOf(PaymentMethodSetupFailed);
    await expect(declined).rejects.toMatchObject({ detail: 'Could not add this payment method: Your card was declined. Please try again with a different card.' });
    // An unknown token is the customer's to correct: 422 on the field.
    expect((await v1(security.customerSession, 'POST', '/customer-portal/customers/me/payment-methods', { confirmation_token_id: 'tok_nothing', set_default: false, return_url: returnUrl })).status).toBe(422);

    // A card that wants 3-D Secure: requires_action with a client secret, confirmed once the customer authenticated.
    const waiting = await portal.customerPortal.customers.addPaymentMethod(security, { confirmationTokenId: 'tok_threeDSecure2Required', setDefault: false, returnUrl });
    expect(waiting).toMatchObject({ status: 'requires_action', clientSecret: expect.stringMatching(/^seti_sandbox_\w+_secret$/) });
    const setupId = (waiting as { clientSecret: string }).clientSecret.replace(/_secret$/, '');
    expect(await portal.customerPortal.customers.confirmPaymentMethod(security, { setupIntentId: setupId, setDefault: false })).toMatchObject({ status: 'requires_action' });
    // Another customer cannot confirm Hal's setup (Polar's 422 on setup_intent_id).
    const other = await v1(adaToken, 'POST', '/customer-portal/customers/me/payment-methods/confirm', { setup_intent_id: setupId, set_default: true });
    expect(other.status).toBe(422);
    expect((await other.json()).detail[0]).toMatchObject({ loc: ['body', 'setup_intent_id'], msg: 'Invalid setup_intent_id.' });
    const authenticated = await fetch(`${daemon.url}/sandbox/authenticate/${setupId}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: daemon.url }, body: 'outcome=complete', redirect: 'manual' });
    expect(authenticated.headers.get('location')).toBe(`/portal/back?setup_intent=${setupId}&redirect_status=succeeded`);
    const confirmed = await portal.customerPortal.customers.confirmPaymentMethod(security, { setupIntentId: setupId, setDefault: false });
    expect(confirmed).toMatchObject({ status: 'succeeded', paymentMethod: { methodMetadata: { last4: '3220' } } });
    // Confirming again saves nothing more; the subscription keeps the card it was given as default.
    await portal.customerPortal.customers.confirmPaymentMethod(security, { setupIntentId: setupId, setDefault: false });
    expect((await portal.customerPortal.customers.listPaymentMethods(security, {})).result.items).toHaveLength(3);
    expect((await daemon.db('subscriptions').where({ id: hal.subscriptionId }).first()).payment_method_id).toBe(newId);
  });
});

describe('/v1/customer-portal email update, through the SDK', () => {
  const tokenIn = (body: string) => /token=(till_cev_[\w-]+)/.exec(body)?.[1];
  const allowEmailChange = (allow: boolean) => v1(owner.token, 'PATCH', `/organizations/${orgX}`, { customer_portal_settings: { customer: { allow_email_change: allow } } });

  it('mails a single-use link to the new address; verifying it changes the email (customer.updated) and answers a new session', async () => {
    const ivy = await sellerX.customers.create({ organizationId: orgX, email: 'ivy@example.test', name: 'Ivy' });
    const security = { customerSession: await sessionFor(sellerX, ivy.id) };
    // Off by default, as in Polar: 403.
    expect((await v1(security.customerSession, 'POST', '/customer-portal/customers/me/email-update/request', { email: 'ivy.new@example.test' })).status).toBe(403);
    expect((await allowEmailChange(true)).status).toBe(200);
    try {
      expect((await sellerX.organizations.get({ id: orgX })).customerPortalSettings).toMatchObject({ customer: { allowEmailChange: true } });
      const same = await v1(security.customerSession, 'POST', '/customer-portal/customers/me/email-update/request', { email: 'IVY@example.test' });
      expect(same.status).toBe(422);
      expect((await same.json()).detail[0]).toMatchObject({ loc: ['body', 'email'], msg: 'New email is the same as your current email.' });

      await portal.customerPortal.customers.requestEmailUpdate(security, { email: 'ivy.new@example.test' });
      const [mail] = await listOutboxMail(daemon.db, { to: 'ivy.new@example.test', limit: 5 });
      expect(mail!.subject).toBe('Verify your new email address for Portal Shop');
      const token = tokenIn(mail!.body)!;
      expect(mail!.body).toContain(`${daemon.baseUrl}/portal/`);
      expect(await daemon.db('customer_email_updates').where({ customer_id: ivy.id }).first()).not.toHaveProperty('token', token);
      expect(JSON.stringify(await daemon.db('customer_email_updates'))).not.toContain(token);

      await portal.customerPortal.customers.checkEmailUpdate({ token });
      const before = (await listEvents(daemon.db, orgX)).length;
      const verified = await portal.customerPortal.customers.verifyEmailUpdate({ token });
      expect(verified.token).toMatch(/^till_cst_/);
      expect(await sellerX.customers.get({ id: ivy.id })).toMatchObject({ email: 'ivy.new@example.test', emailVerified: true });
      const types = (await listEvents(daemon.db, orgX)).slice(before).map((e) => e.payload.type);
      expect(types).toEqual(expect.arrayContaining(['customer.updated', 'customer.state_changed']));
      expect((await portal.customerPortal.customers.get({ customerSession: verified.token })).email).toBe('ivy.new@example.test');
      const [told] = await listOutboxMail(daemon.db, { to: 'ivy@example.test', limit: 5 });
      expect(told!.subject).toBe('Your Portal Shop email address has been changed');

      // Used once: checking or verifying the same link again is Polar's 401.
      expect((await v1(undefined, 'GET', `/customer-portal/customers/me/email-update/check?token=${token}`)).status).toBe(401);
      const again = await v1(undefined, 'POST', '/customer-portal/customers/me/email-update/verify', { token });
      expect(again.status).toBe(401);
      expect(await again.json()).toMatchObject({ error: 'InvalidCustomerEmailUpdate', detail: 'This email update request is invalid or has expired.' });
    } finally {
      await allowEmailChange(false);
    }
  });

  it('refuses an address another customer took meanwhile (422 on the token), an expired link (401), and a fourth request in 15 minutes (429)', async () => {
    const jo = await sellerX.customers.create({ organizationId: orgX, email: 'jo@example.test', name: 'Jo' });
    const session = await sessionFor(sellerX, jo.id);
    expect((await allowEmailChange(true)).status).toBe(200);
    try {
      const request = (email: string) => v1(session, 'POST', '/customer-portal/customers/me/email-update/request', { email });
      const latestToken = async (to: string) => tokenIn((await listOutboxMail(daemon.db, { to, limit: 1 }))[0]!.body)!;
      expect((await request('jo.taken@example.test')).status).toBe(202);
      const taken = await latestToken('jo.taken@example.test');
      await sellerX.customers.create({ organizationId: orgX, email: 'jo.taken@example.test', name: 'Quick' });
      const clash = await v1(undefined, 'POST', '/customer-portal/customers/me/email-update/verify', { token: taken });
      expect(clash.status).toBe(422);
      expect((await clash.json()).detail[0]).toMatchObject({ loc: ['body', 'token'], msg: 'This email address is already in use.' });

      expect((await request('jo.late@example.test')).status).toBe(202);
      const late = await latestToken('jo.late@example.test');
      await daemon.db('customer_email_updates').where({ customer_id: jo.id, email: 'jo.late@example.test' }).update({ expires_at: new Date(Date.now() - 1000).toISOString() });
      expect((await v1(undefined, 'POST', '/customer-portal/customers/me/email-update/verify', { token: late })).status).toBe(401);

      expect((await request('jo.third@example.test')).status).toBe(202);
      expect((await request('jo.fourth@example.test')).status).toBe(429);
      expect((await sellerX.customers.get({ id: jo.id })).email).toBe('jo@example.test');
    } finally {
      await allowEmailChange(false);
    }
  });
});

describe('customer portal tenancy', () => {
  /** Every portal route that names an object, with the object of each kind that is not Ada's. */
  const othersOf = (who: Bought): Record<string, string> => ({
    orders: who.orderId,
    subscriptions: who.subscriptionId,
    'benefit-grants': who.grantIds[0]!,
    'license-keys': who.licenseKeyId,
    meters: who.customerMeterId,
    customers: who.paymentMethodId,
  });
  /** A valid body for each kind of object a portal route changes (a grant of any type takes `benefit_type` alone). */
  const objectRoutes = () => PORTAL_ROUTES.filter((route) => route.path.includes('/:') && !route.public);
  /** The valid bodies of each write route that names an object. */
  const writeBodies = (): Record<string, unknown[]> => ({
    '/v1/customer-portal/orders/:id': [{ billing_name: 'Not yours' }],
    '/v1/customer-portal/benefit-grants/:id': [{ benefit_type: 'custom' }],
    '/v1/customer-portal/subscriptions/:id': [{ cancel_at_period_end: true }, { cancel_at_period_end: false }, { product_id: productX }, { pending_update: null }],
  });

  it('has an object of another customer for every portal route that names one (the walk is complete)', () => {
    for (const route of objectRoutes()) expect(othersOf(bob)[route.path.split('/')[3]!], route.path).toBeDefined();
  });

  it('answers 404 to Ada’s session for another customer’s objects, in her organization and in another', async () => {
    for (const other of [bob, yuri]) {
      for (const route of objectRoutes()) {
        const id = othersOf(other)[route.path.split('/')[3]!]!;
        // A write carries each valid body it takes, so that only the object decides the answer.
        for (const body of route.method === 'patch' ? writeBodies()[route.path]! : [undefined]) {
          const res = await v1(adaToken, route.method.toUpperCase(), route.path.replace('/v1', '').replace(':id', id), body);
          expect([res.status, route.method, route.path, body, other.customerId]).toEqual([404, route.method, route.path, body, other.customerId]);
          expect((await res.json()).error).toBe('ResourceNotFound');
        }
      }
    }
  });

  it('still shows Ada her own objects on every object route (the walk is not vacuous)', async () => {
    for (const route of objectRoutes().filter((r) => r.method === 'get')) {
      const id = othersOf(ada)[route.path.split('/')[3]!]!;
      expect([(await v1(adaToken, 'GET', route.path.replace('/v1', '').replace(':id', id))).status, route.path]).toEqual([200, route.path]);
    }
  });

  it('shows none of another customer’s objects in any portal list', async () => {
    const foreign = [bob, yuri].flatMap((who) => [who.customerId, who.orderId, who.subscriptionId, who.licenseKeyId, who.customerMeterId, ...who.grantIds]);
    for (const route of PORTAL_ROUTES.filter((r) => r.method === 'get' && !r.path.includes('/:') && !r.public)) {
      const res = await v1(adaToken, 'GET', route.path.replace('/v1', ''));
      expect([res.status, route.path]).toEqual([200, route.path]);
      const body = await res.text();
      for (const id of foreign) expect(body, `${route.path} shows ${id}`).not.toContain(id);
    }
  });

  it('refuses seller credentials and no credentials on every portal route but the public one with 401', async () => {
    const token = (await (await v1(owner.token, 'POST', '/organization-access-tokens/', { organization_id: orgX, comment: 'seller', scopes: ['customers:read', 'orders:read'] })).json()).token as string;
    // The organization's page data, and an email update's check and verify, whose token is the proof (as Polar's).
    expect(PORTAL_ROUTES.filter((route) => route.public).map((route) => route.operationId).sort()).toEqual([
      'customer_portal:customers:check_email_update',
      'customer_portal:customers:verify_email_update',
      'customer_portal:organizations:get',
    ]);
    for (const route of PORTAL_ROUTES.filter((r) => !r.public)) {
      const path = route.path.replace('/v1', '').replace(':id', ada.orderId);
      for (const credential of [undefined, owner.token, token]) {
        expect([(await v1(credential, route.method.toUpperCase(), path)).status, route.path]).toEqual([401, route.path]);
      }
    }
  });

  it('refuses a customer session on every seller route with 401', async () => {
    // Public routes (a checkout's client calls, license-key checks) take no credentials: a token there is not used.
    for (const route of V1_ROUTES.filter((r) => !r.public)) {
      const path = route.path.replace('/v1', '').replace(/:(\w+)/g, ada.customerId);
      const res = await v1(adaToken, route.method.toUpperCase(), path, route.method === 'get' || route.method === 'delete' ? undefined : {});
      expect([res.status, route.method, route.path]).toEqual([401, route.method, route.path]);
    }
    expect((await v1(adaToken, 'GET', `/customers/${ada.customerId}`)).status).toBe(401);
  });

  it('ends a session when it expires or its customer is deleted', async () => {
    const expiring = await sessionFor(sellerX, ada.customerId);
    expect((await v1(expiring, 'GET', '/customer-portal/customers/me')).status).toBe(200);
    await daemon.db('customer_sessions').where({ customer_id: ada.customerId }).update({ expires_at: new Date(Date.now() - 1000).toISOString() });
    expect((await v1(expiring, 'GET', '/customer-portal/customers/me')).status).toBe(401);
    // A new session for the customer opens the portal again, and the expired ones are dropped.
    const fresh = await sessionFor(sellerX, ada.customerId);
    expect((await v1(fresh, 'GET', '/customer-portal/customers/me')).status).toBe(200);
    const [{ n }] = await daemon.db('customer_sessions').where({ customer_id: ada.customerId }).count({ n: '*' });
    expect(Number(n)).toBe(1);
    const bobToken = await sessionFor(sellerX, bob.customerId);
    expect((await v1(bobToken, 'GET', '/customer-portal/orders/')).status).toBe(200);
    await sellerX.customers.delete({ id: bob.customerId });
    expect((await v1(bobToken, 'GET', '/customer-portal/orders/')).status).toBe(401);
  });
});
