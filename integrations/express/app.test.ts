import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startSeller, type Seller } from '../../daemon/contract-sdk1/seller.js';
import { routePolarApiTo } from '../../daemon/contract-sdk1/polar-host.js';
import { createApp } from './app.js';

/**
 * @polar-sh/express (0.3.0, on @polar-sh/sdk 0.32) in an Express 4 app built as its README says, against a real tilld.
 * The adapter has no server URL option, only `server: 'sandbox'`, so the process routes Polar's sandbox API host to
 * tilld (polar-host.ts); the app's code is the README's.
 */
let seller: Seller;
let app: Server;
let appUrl: string;
let unroute: () => void;
let productId: string;
const payloads: { type: string; data: Record<string, unknown> }[] = [];
const paidOrders: Record<string, unknown>[] = [];
let paidCheckoutId = '';

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

beforeAll(async () => {
  seller = await startSeller('Express Shop');
  unroute = routePolarApiTo(seller.tilld.url);
  const product = await v1('POST', '/products/', { name: 'E-book', prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }] });
  productId = product.id;
  // The app is served once its webhook endpoint (which names the app's address) has given it the secret.
  app = createServer();
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  const endpoint = await v1('POST', '/webhooks/endpoints', { url: `${appUrl}/polar/webhooks`, format: 'raw', events: ['order.paid', 'checkout.created'] });
  app.on(
    'request',
    createApp({
      accessToken: seller.accessToken,
      successUrl: 'https://shop.example.com/thanks',
      webhookSecret: endpoint.secret,
      onPayload: async (payload) => void payloads.push(payload as never),
      onOrderPaid: async (payload) => void paidOrders.push(payload.data as never),
    }),
  );
});
afterAll(async () => {
  unroute?.();
  await new Promise((resolve) => (app ? app.close(resolve) : resolve(undefined)));
  await seller?.tilld.stop();
});

describe('@polar-sh/express against tilld', () => {
  it('Checkout redirects to Till\'s hosted checkout, which is paid in the sandbox; the success URL carries the checkout id', async () => {
    const email = `buyer-${Date.now()}@example.com`;
    const res = await fetch(`${appUrl}/checkout?products=${productId}&customerEmail=${encodeURIComponent(email)}&metadata=${encodeURIComponent('{"source":"express"}')}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const hosted = new URL(res.headers.get('location')!);
    expect(hosted.origin).toBe(seller.tilld.url);
    const page = await fetch(hosted);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('E-book');

    const clientSecret = decodeURIComponent(hosted.pathname.split('/').pop()!);
    const confirm = await fetch(`${seller.tilld.url}/v1/checkouts/client/${clientSecret}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ confirmation_token_id: 'tok_visa', customer_name: 'Bea Buyer', customer_billing_address: { country: 'US' } }),
    });
    expect(confirm.status).toBe(200);
    const confirmed = await confirm.json();
    const checkout = await eventually(async () => {
      const current = await v1('GET', `/checkouts/${confirmed.id}`);
      return current.status === 'succeeded' ? current : undefined;
    }, 'the checkout to succeed');
    expect(checkout.success_url).toBe(`https://shop.example.com/thanks?checkoutId=${checkout.id}`);
    paidCheckoutId = checkout.id;
    expect(checkout).toMatchObject({ customer_email: email, metadata: { source: 'express' } });
  });

  it('Webhooks verifies Till\'s signed webhooks and hands them to the typed handlers; a forged one is refused', async () => {
    // The handlers get the SDK's parsed objects (camelCase), as validateEvent makes them.
    const paid = await eventually(() => paidOrders.find((order) => order.checkoutId === paidCheckoutId), 'the order.paid webhook');
    expect(paid).toMatchObject({ status: 'paid', productId, netAmount: 1500 });
    expect(payloads.map((payload) => payload.type)).toEqual(expect.arrayContaining(['checkout.created', 'order.paid']));

    const forged = await fetch(`${appUrl}/polar/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': 'msg_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,Zm9yZ2Vk' },
      body: JSON.stringify({ type: 'order.paid', timestamp: new Date().toISOString(), data: { ...paid, id: 'forged' } }),
    });
    expect(forged.status).toBe(403);
    expect(paidOrders).toHaveLength(1);
  });

  it('CustomerPortal opens the customer\'s portal through a customer session', async () => {
    const email = `portal-${Date.now()}@example.com`;
    const customer = await v1('POST', '/customers/', { email, name: 'Pat Portal' });
    const res = await fetch(`${appUrl}/portal?customerId=${customer.id}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const portal = new URL(res.headers.get('location')!);
    expect(portal.origin).toBe(seller.tilld.url);
    // The link signs the customer in (a cookie) and sends them on to the portal without the token in the URL.
    const signIn = await fetch(portal, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.getSetCookie().map((line) => line.split(';')[0]).join('; ');
    const page = await fetch(new URL(signIn.headers.get('location')!, portal), { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(email);
  });
});
