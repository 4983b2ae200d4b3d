import { createHash } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V1_ROUTES } from '../http/v1/router.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { refreshedCustomerMeter } from '../../core/metering/testing.js';
import { seedPaidOrder } from '../../core/billing/orders/testing.js';
import { insertDispute } from '../../core/billing/disputes/repository.js';
import { createSandboxProcessor } from '../../core/payments/sandbox.js';
import { systemClock } from '../../core/clock.js';
import { grantForOrder, seedProductWithBenefits, uploadDownloadable } from '../testing/benefit-grants.js';

// Tenancy is absolute: with a second organization's credentials, every /v1 route that names an object of
// the first answers 404 ResourceNotFound, and no list shows one. The walk covers every route with a path
// parameter; a new route without an entry below fails the completeness test.

let daemon: TestDaemon;
let alice: SignedIn;
let mallory: SignedIn;
let malloryToken: string;
/** Objects of Alice's organization, by the first path segment after /v1/. */
const ids: Record<string, string> = {};
let externalId: string;

const ALL_SCOPES = [
  'webhooks:read', 'webhooks:write',
  'organizations:read', 'organizations:write', 'products:read', 'products:write', 'benefits:read', 'benefits:write',
  'files:read', 'files:write', 'custom_fields:read', 'custom_fields:write', 'discounts:read', 'discounts:write',
  'customers:read', 'customers:write',
  'meters:read', 'meters:write', 'events:read', 'events:write',
  'orders:read', 'orders:write', 'refunds:read', 'refunds:write',
  'license_keys:read', 'license_keys:write',
  'checkouts:read', 'checkouts:write', 'checkout_links:read', 'checkout_links:write',
  'subscriptions:read', 'subscriptions:write',
  'metrics:read', 'payments:read', 'disputes:read', 'disputes:write',
];

/** A body that passes validation for each write route, so the answer is about the object, not the input. */
const BODIES: Record<string, unknown> = {
  'webhooks:update_webhook_endpoint': { name: 'Hijacked' },
  'organizations:update': { name: 'Hijacked' },
  'organizations:clock:update': { sandbox: true },
  'organizations:clock:advance': { by: '+1d' },
  'organization_access_tokens:update': { comment: 'hijacked' },
  'organization_access_tokens:delete': undefined,
  'benefits:update': { type: 'custom', description: 'Hijacked benefit' },
  'custom-fields:update': { type: 'text', name: 'Hijacked' },
  'customers:update': { name: 'Hijacked' },
  'customers:update_external': { name: 'Hijacked' },
  'discounts:update': { name: 'Hijacked' },
  'files:update': { name: 'hijacked.pdf' },
  'files:uploaded': { id: 'upload', path: 'path', parts: [{ number: 1, checksum_etag: 'etag' }] },
  'products:update': { name: 'Hijacked' },
  'products:update_benefits': { benefits: [] },
  'meters:update': { name: 'Hijacked meter' },
  'orders:update': { billing_name: 'Hijacked' },
  'license_keys:update': { status: 'disabled' },
  'checkouts:update': { metadata: { hijacked: true } },
  'checkout-links:update': { label: 'Hijacked' },
  'event-types:update': { label: 'Hijacked' },
  'subscriptions:update': { cancel_at_period_end: true },
};

async function createOrganization(who: SignedIn, name: string): Promise<string> {
  const res = await who.client.post('/organization/create', { name, slug: `${name.toLowerCase()}-${Date.now()}` });
  return res.body.id;
}

async function mintToken(who: SignedIn, organizationId: string): Promise<string> {
  const res = await fetch(`${daemon.url}/v1/organization-access-tokens/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${who.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ organization_id: organizationId, comment: 'walk', scopes: ALL_SCOPES }),
  });
  const body = await res.json();
  ids['organization-access-tokens'] ??= body.organization_access_token.id;
  return body.token;
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  alice = await signUp(daemon.url, { name: 'Alice' });
  mallory = await signUp(daemon.url, { name: 'Mallory' });
  const aliceOrg = await createOrganization(alice, 'Alice');
  ids.organizations = aliceOrg;
  await mintToken(alice, aliceOrg);
  malloryToken = await mintToken(mallory, await createOrganization(mallory, 'Mallory'));

  const polar = new Polar({ accessToken: alice.token, serverURL: daemon.url });
  externalId = `ext-${Date.now()}`;
  ids.customers = (await polar.customers.create({ organizationId: aliceOrg, email: 'carol@example.com', externalId })).id;
  ids.discounts = (await polar.discounts.create({ organizationId: aliceOrg, name: 'Ten', type: 'percentage', basisPoints: 1000, duration: 'once' } as never)).id;
  ids['custom-fields'] = (await polar.customFields.create({ organizationId: aliceOrg, type: 'text', slug: 'note', name: 'Note', properties: {} } as never)).id;
  ids.benefits = (await polar.benefits.create({ organizationId: aliceOrg, type: 'custom', description: 'Support', properties: { note: null } } as never)).id;
  const bytes = Buffer.from('tenancy');
  ids.files = (
    await polar.files.create({
      organizationId: aliceOrg,
      service: 'downloadable',
      name: 'a.pdf',
      mimeType: 'application/pdf',
      size: bytes.length,
      checksumSha256Base64: createHash('sha256').update(bytes).digest('base64'),
      upload: { parts: [{ number: 1, chunkStart: 0, chunkEnd: bytes.length }] },
    } as never)
  ).id;
  ids.meters = (await polar.meters.create({ organizationId: aliceOrg, name: 'Calls', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } })).id;
  await polar.events.ingest({ events: [{ name: 'tenancy', customerId: ids.customers, externalId: `tenancy-${externalId}` }] });
  ids.events = (await polar.events.list({ organizationId: aliceOrg })).items[0]!.id;
  ids['customer-meters'] = await refreshedCustomerMeter(daemon.db, aliceOrg, ids.customers);
  const address = { line1: null, line2: null, postal_code: null, city: null, state: null, country: 'FR' };
  ids.orders = (await seedPaidOrder(daemon.db, systemClock, createSandboxProcessor({ db: daemon.db }), { organizationId: aliceOrg, customerId: ids.customers, amount: 1500, billingName: 'Carol', billingAddress: address })).id;
  ids.payments = (await daemon.db('payments').where({ order_id: ids.orders }).first('id')).id;
  const disputed = { organizationId: aliceOrg, orderId: ids.orders, paymentId: ids.payments!, customerId: ids.customers!, processor: 'stripe', processorDisputeId: `dp_tenancy_${externalId}` };
  ids.disputes = (await insertDispute(daemon.db, { ...disputed, status: 'needs_response', reason: 'fraudulent', amount: 1500, taxAmount: 0, currency: 'usd', evidenceDueBy: null, pastDue: false, createdAt: new Date(), modifiedAt: null })).id;
  ids.webhooks = (await polar.webhooks.createWebhookEndpoint({ organizationId: aliceOrg, url: 'https://hooks.example.com/tenancy', format: 'raw', events: [] })).id;
  if (V1_ROUTES.some((route) => route.path.startsWith('/v1/products'))) {
    ids.products = (await polar.products.create({ organizationId: aliceOrg, name: 'Book', prices: [{ amountType: 'fixed', priceAmount: 1500, priceCurrency: 'usd' }] } as never)).id;
  }
  ids.checkouts = (await polar.checkouts.create({ products: [ids.products!] })).id;
  ids['checkout-links'] = (await polar.checkoutLinks.create({ paymentProcessor: 'stripe', products: [ids.products!] })).id;
  // A user event's type gets its id when the names are first listed.
  ids['event-types'] = (await polar.eventTypes.list({ organizationId: aliceOrg, source: 'user' })).result.items.find((type) => type.name === 'tenancy')!.id!;
  ids['tax-rates'] = (await (await fetch(`${daemon.url}/v1/tax-rates`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ organization_id: aliceOrg, country: 'FR', basis_points: 2000 }) })).json()).id;
  const download = await uploadDownloadable(daemon, alice.token, aliceOrg, Buffer.from('tenancy download'));
  const licensed = await seedProductWithBenefits(daemon, alice.token, aliceOrg, [
    { type: 'license_keys', description: 'Licence', properties: { activations: { limit: 1, enableCustomerAdmin: false } } },
    { type: 'downloadables', description: 'Files', properties: { files: [download] } },
  ] as never);
  await grantForOrder(daemon, { organizationId: aliceOrg, customerId: licensed.customerId, productId: licensed.productId, orderId: ids.orders });
  // The walk's benefit is the downloadables one: every /v1/benefits/{id}/… route (files included) answers its owner.
  ids.benefits = licensed.benefitIds[1]!;
  ids['benefit-grants'] = (await polar.benefitGrants.list({ organizationId: aliceOrg, customerId: licensed.customerId })).result.items.find((g) => g.benefit.type === 'downloadables')!.id;
  const licenseKey = (await polar.licenseKeys.list({ organizationId: aliceOrg })).result.items[0]!;
  ids['license-keys'] = licenseKey.id;
  ids['license-key-activations'] = (await polar.licenseKeys.activate({ key: licenseKey.key, organizationId: aliceOrg, label: 'tenancy' })).id;
  const monthly = await polar.products.create({ organizationId: aliceOrg, name: 'Monthly', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 900 }] } as never);
  const recurring = await polar.checkouts.create({ products: [monthly.id], customerEmail: 'subscriber@example.com' });
  await new Polar({ accessToken: '', serverURL: daemon.url }).checkouts.clientConfirm({ clientSecret: recurring.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
  ids.subscriptions = (await polar.checkouts.get({ id: recurring.id })).subscriptionId!;
});
afterAll(async () => {
  await daemon?.close();
});

const objectRoutes = () => V1_ROUTES.filter((route) => route.path.includes('/:') && !route.public);

function urlOf(path: string): string {
  const resource = path.split('/')[2]!;
  return path.replace(':external_id', encodeURIComponent(externalId)).replace(':id', ids[resource] ?? 'missing').replace(':activation_id', ids['license-key-activations'] ?? 'missing');
}

async function call(token: string, route: (typeof V1_ROUTES)[number]) {
  const body = BODIES[route.operationId];
  return fetch(`${daemon.url}${urlOf(route.path)}`, {
    method: route.method.toUpperCase(),
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
}

describe('the tenancy walk', () => {
  it('has an object of the first organization for every route that names one', () => {
    for (const route of objectRoutes()) expect(ids[route.path.split('/')[2]!], route.path).toBeDefined();
  });

  it('answers ResourceNotFound to a member of another organization on every object route', async () => {
    for (const route of objectRoutes()) {
      const res = await call(mallory.token, route);
      expect([res.status, route.method, route.path]).toEqual([404, route.method, route.path]);
      expect((await res.json()).error).toBe('ResourceNotFound');
    }
  });

  it("answers ResourceNotFound to another organization's access token on every object route it may call", async () => {
    for (const route of objectRoutes().filter((r) => !r.userOnly)) {
      const res = await call(malloryToken, route);
      expect([res.status, route.method, route.path]).toEqual([404, route.method, route.path]);
    }
  });

  it('shows none of the first organization’s objects in any list', async () => {
    const lists = V1_ROUTES.filter((route) => route.method === 'get' && !route.path.includes('/:'));
    for (const route of lists) {
      for (const token of route.tokenOnly ? [malloryToken] : [mallory.token, ...(route.userOnly ? [] : [malloryToken])]) {
        const res = await fetch(`${daemon.url}${route.path}/`, { headers: { authorization: `Bearer ${token}` } });
        expect(res.status, route.path).toBe(200);
        const text = await res.text();
        for (const id of Object.values(ids)) expect(text.includes(id), `${route.path} lists ${id}`).toBe(false);
      }
    }
  });

  it('still lets the owner reach every object (the walk is not vacuous)', async () => {
    for (const route of objectRoutes().filter((r) => r.method === 'get')) {
      const res = await call(alice.token, route);
      expect([res.status, route.path]).toEqual([200, route.path]);
    }
  });
});
