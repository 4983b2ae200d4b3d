import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startSeller, type Seller } from '../../daemon/contract-sdk1/seller.js';
import { createAuth } from './app.js';

/**
 * @polar-sh/better-auth (1.8, on @polar-sh/sdk 0.47 as it asks) in a Better Auth app built as its README says,
 * against a real tilld: sign-up makes the customer (the user's id as its external id), the checkout plugin's checkout
 * is paid in the sandbox, the portal link opens, usage is ingested and read back as customer meters, and webhooks are
 * verified and handed over. Every call goes over HTTP, through the app and through tilld.
 */
let seller: Seller;
let app: Server;
let appUrl: string;
let proProductId: string;
let meterId: string;
const payloads: { type: string; data: Record<string, unknown> }[] = [];

/** A browser of the app: keeps Better Auth's cookies. */
function browser() {
  const jar = new Map<string, string>();
  return async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await fetch(`${appUrl}/api/auth${path}`, {
      method,
      headers: { origin: appUrl, cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = pair.split('=');
      if (value) jar.set(name, value);
      else jar.delete(name);
    }
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

const v1 = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${seller.tilld.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${seller.accessToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
};

/** Pays a checkout's hosted page with the sandbox's test card, as the page's form does. */
async function pay(checkoutUrl: string) {
  const page = await fetch(checkoutUrl);
  expect(page.status).toBe(200);
  const clientSecret = decodeURIComponent(new URL(checkoutUrl).pathname.split('/').pop()!);
  const confirm = await fetch(`${seller.tilld.url}/v1/checkouts/client/${clientSecret}/confirm`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ confirmation_token_id: 'tok_visa', customer_name: 'Uma User', customer_billing_address: { country: 'DE' } }),
  });
  const answer = await confirm.json();
  expect(confirm.status, JSON.stringify(answer)).toBe(200);
  return answer.id as string;
}

beforeAll(async () => {
  seller = await startSeller('Auth Shop');
  const product = await v1('POST', '/products/', { name: 'Pro', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] });
  proProductId = product.id;
  const meter = await v1('POST', '/meters/', { name: 'Uploads', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'file-uploads' }] }, aggregation: { func: 'sum', property: 'uploadedFiles' } });
  meterId = meter.id;
  // The app is served once its webhook endpoint (which names the app's address) has given it the secret.
  app = createServer();
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  const endpoint = await v1('POST', '/webhooks/endpoints', { url: `${appUrl}/api/auth/polar/webhooks`, format: 'raw', events: ['customer.created', 'customer.updated', 'order.paid', 'subscription.active', 'customer.state_changed'] });
  const { handler } = createAuth({
    baseURL: appUrl,
    polarServerURL: seller.tilld.url,
    accessToken: seller.accessToken,
    webhookSecret: endpoint.secret,
    proProductId,
    onPayload: async (payload) => void payloads.push(payload as never),
  });
  app.on('request', handler);
});
afterAll(async () => {
  await new Promise((resolve) => (app ? app.close(resolve) : resolve(undefined)));
  await seller?.tilld.stop();
});

describe('@polar-sh/better-auth against tilld', () => {
  const user = browser();
  const email = `uma-${Date.now()}@example.com`;
  let userId: string;

  it('signing up creates the Polar customer with the user\'s id as its external id', async () => {
    const signedUp = await user('POST', '/sign-up/email', { email, password: 'correct horse battery', name: 'Uma User' });
    expect(signedUp.status).toBe(200);
    userId = signedUp.body.user.id;
    const customer = await v1('GET', `/customers/external/${encodeURIComponent(userId)}`);
    expect(customer).toMatchObject({ email, name: 'Uma User', external_id: userId });
  });

  it('checkout by slug is paid in the sandbox and makes the user a subscriber', async () => {
    const started = await user('POST', '/checkout', { slug: 'pro' });
    expect(started.status).toBe(200);
    expect(started.body.redirect).toBe(true);
    expect(new URL(started.body.url).origin).toBe(seller.tilld.url);
    const checkoutId = await pay(started.body.url);
    const checkout = await eventually(async () => {
      const current = await v1('GET', `/checkouts/${checkoutId}`);
      return current.status === 'succeeded' ? current : undefined;
    }, 'the checkout to succeed');
    expect(checkout).toMatchObject({ external_customer_id: userId, customer_email: email, success_url: `${appUrl}/success?checkout_id=${checkoutId}` });

    const state = await user('GET', '/customer/state');
    expect(state.status).toBe(200);
    expect(state.body).toMatchObject({ externalId: userId, activeSubscriptions: [expect.objectContaining({ productId: proProductId, status: 'active' })] });
    const orders = await user('GET', '/customer/orders/list');
    expect(orders.status).toBe(200);
    expect(orders.body.result.items).toEqual([expect.objectContaining({ productId: proProductId, status: 'paid' })]);
    const subscriptions = await user('GET', '/customer/subscriptions/list?active=true');
    expect(subscriptions.status).toBe(200);
    expect(subscriptions.body.result.items).toEqual([expect.objectContaining({ productId: proProductId })]);
  });

  it('the portal link opens the customer\'s portal', async () => {
    const portal = await user('POST', '/customer/portal', {});
    expect(portal.status).toBe(200);
    const link = new URL(portal.body.url);
    expect(link.origin).toBe(seller.tilld.url);
    const signIn = await fetch(link, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.getSetCookie().map((line) => line.split(';')[0]).join('; ');
    const page = await fetch(new URL(signIn.headers.get('location')!, link), { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(email);
    expect(html).toContain('Pro');
  });

  it('usage is ingested for the signed-in user and read back as their customer meter', async () => {
    const ingested = await user('POST', '/usage/ingest', { event: 'file-uploads', metadata: { uploadedFiles: 12 } });
    expect(ingested.status).toBe(200);
    expect(ingested.body).toMatchObject({ inserted: 1 });
    const meters = await eventually(async () => {
      const listed = await user('GET', '/usage/meters/list');
      expect(listed.status).toBe(200);
      const mine = listed.body.result.items.find((item: { meterId: string }) => item.meterId === meterId);
      return mine?.consumedUnits === 12 ? mine : undefined;
    }, 'the customer meter to count the upload');
    expect(meters).toMatchObject({ meterId, consumedUnits: 12 });
  });

  it('webhooks are verified and handed to the plugin\'s handlers', async () => {
    await eventually(() => payloads.find((payload) => payload.type === 'order.paid'), 'the order.paid webhook');
    const types = new Set(payloads.map((payload) => payload.type));
    expect([...types]).toEqual(expect.arrayContaining(['customer.created', 'customer.updated', 'order.paid', 'subscription.active']));
    const forged = await fetch(`${appUrl}/api/auth/polar/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': 'msg_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,Zm9yZ2Vk' },
      body: JSON.stringify({ type: 'customer.created', timestamp: new Date().toISOString(), data: {} }),
    });
    expect(forged.status).toBe(400);
  });
});
