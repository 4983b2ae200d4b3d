import { createHash } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { AlreadyCanceledSubscription } from '@polar-sh/sdk/models/errors/alreadycanceledsubscription.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../core/webhooks/outbox.js';
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
let sellerX: Polar;
/** A Polar client with no seller credentials: the portal calls pass the customer session per call, as the SDK does. */
let portal: Polar;

interface Bought {
  customerId: string;
  orderId: string;
  subscriptionId: string;
  grantIds: string[];
  licenseKeyId: string;
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
  return product.id;
}

async function buy(seller: Polar, organizationId: string, productId: string, email: string, externalId: string): Promise<Bought> {
  const customer = await seller.customers.create({ organizationId, email, name: email.split('@')[0], externalId });
  const checkout = await seller.checkouts.create({ products: [productId], customerId: customer.id });
  await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
  const done = await seller.checkouts.get({ id: checkout.id });
  expect(done.status).toBe('succeeded');
  const order = await daemon.db('orders').where({ checkout_id: checkout.id }).first();
  const grants = (await seller.benefitGrants.list({ customerId: customer.id })).result.items;
  const [key] = (await seller.licenseKeys.list({ organizationId })).result.items.filter((k) => k.customerId === customer.id);
  return { customerId: customer.id, orderId: String(order.id), subscriptionId: done.subscriptionId!, grantIds: grants.map((g) => g.id), licenseKeyId: key!.id };
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
  const productX = await shop(sellerX, orgX, 'alpha');
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

describe('customer portal tenancy', () => {
  /** Every portal route that names an object, with the object of each kind that is not Ada's. */
  const othersOf = (who: Bought): Record<string, string> => ({
    orders: who.orderId,
    subscriptions: who.subscriptionId,
    'benefit-grants': who.grantIds[0]!,
    'license-keys': who.licenseKeyId,
  });
  /** A valid body for each kind of object a portal route changes (a grant of any type takes `benefit_type` alone). */
  const VALID_PATCH_BODIES: Record<string, unknown> = { subscriptions: { cancel_at_period_end: true }, 'benefit-grants': { benefit_type: 'custom' } };
  const objectRoutes = () => PORTAL_ROUTES.filter((route) => route.path.includes('/:') && !route.public);

  it('has an object of another customer for every portal route that names one (the walk is complete)', () => {
    for (const route of objectRoutes()) expect(othersOf(bob)[route.path.split('/')[3]!], route.path).toBeDefined();
  });

  it('answers 404 to Ada’s session for another customer’s objects, in her organization and in another', async () => {
    for (const other of [bob, yuri]) {
      for (const route of objectRoutes()) {
        const id = othersOf(other)[route.path.split('/')[3]!]!;
        // A write carries a valid body, so that only the object decides the answer.
        const body = route.method === 'patch' ? VALID_PATCH_BODIES[route.path.split('/')[3]!] : undefined;
        const res = await v1(adaToken, route.method.toUpperCase(), route.path.replace('/v1', '').replace(':id', id), body);
        expect([res.status, route.method, route.path, other.customerId]).toEqual([404, route.method, route.path, other.customerId]);
        expect((await res.json()).error).toBe('ResourceNotFound');
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
    const foreign = [bob, yuri].flatMap((who) => [who.customerId, who.orderId, who.subscriptionId, who.licenseKeyId, ...who.grantIds]);
    for (const route of PORTAL_ROUTES.filter((r) => r.method === 'get' && !r.path.includes('/:') && !r.public)) {
      const res = await v1(adaToken, 'GET', route.path.replace('/v1', ''));
      expect([res.status, route.path]).toEqual([200, route.path]);
      const body = await res.text();
      for (const id of foreign) expect(body, `${route.path} shows ${id}`).not.toContain(id);
    }
  });

  it('refuses seller credentials and no credentials on every portal route but the public one with 401', async () => {
    const token = (await (await v1(owner.token, 'POST', '/organization-access-tokens/', { organization_id: orgX, comment: 'seller', scopes: ['customers:read', 'orders:read'] })).json()).token as string;
    expect(PORTAL_ROUTES.filter((route) => route.public).map((route) => route.operationId)).toEqual(['customer_portal:organizations:get']);
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
