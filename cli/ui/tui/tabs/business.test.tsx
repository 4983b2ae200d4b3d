import { afterEach, describe, expect, it } from 'vitest';
import { tabKey } from '../App.js';
import { fakeBackend, KEY, renderApp, until, type Sent } from '../testing.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

const customer = { id: 'cus_1', email: 'ada@example.com', name: 'Ada', created_at: '2026-11-01T10:00:00Z', external_id: null };
const order = (id: string, billing: 'one_time' | 'recurring') => ({
  id,
  created_at: '2026-11-20T10:00:00Z',
  status: 'paid',
  paid: true,
  customer,
  customer_id: customer.id,
  product: { name: billing === 'one_time' ? 'Sticker' : 'Pro plan' },
  billing_reason: billing === 'one_time' ? 'purchase' : 'subscription_create',
  subscription_id: billing === 'one_time' ? null : 'sub_1',
  currency: 'usd',
  subtotal_amount: 2500,
  discount_amount: 0,
  tax_amount: 0,
  total_amount: 2500,
  refunded_amount: 0,
  refundable_amount: 2500,
  items: [{ label: billing === 'one_time' ? 'Sticker' : 'Pro plan (monthly)', amount: 2500 }],
});
const subscription = {
  id: 'sub_1',
  status: 'active',
  customer,
  product: { name: 'Pro plan' },
  amount: 2500,
  currency: 'usd',
  recurring_interval: 'month',
  recurring_interval_count: 1,
  started_at: '2026-11-20T10:00:00Z',
  current_period_start: '2026-11-20T10:00:00Z',
  current_period_end: '2026-12-20T10:00:00Z',
  cancel_at_period_end: false,
  canceled_at: null,
  ends_at: null,
  ended_at: null,
};

/** A server with one customer, two orders and one subscription; records what is sent. */
function shop() {
  const opened: string[] = [];
  const fake = fakeBackend(({ method, path }: Sent) => {
    if (method === 'GET' && path.startsWith('/v1/orders/?')) {
      const all = [order('ord_1', 'recurring'), order('ord_2', 'one_time')];
      if (path.includes('product_billing_type=one_time')) return { items: all.slice(1) };
      if (path.includes('subscription_id=sub_1')) return { items: all.slice(0, 1) };
      return { items: all };
    }
    if (path.startsWith('/v1/orders/ord_2/invoice')) return { url: 'http://127.0.0.1:4010/v1/orders/ord_2/invoice.pdf?signature=s' };
    if (path.startsWith('/v1/payments/')) return { items: [{ id: 'pay_1', created_at: '2026-11-20T10:00:00Z', amount: 2500, currency: 'usd', status: 'succeeded' }] };
    if (path.startsWith('/v1/refunds/')) return { items: [] };
    if (path.startsWith('/v1/customers/')) return { items: path.includes('query=nobody') ? [] : [customer] };
    if (path.startsWith('/v1/customer-sessions/')) return { customer_id: customer.id, customer_portal_url: 'http://127.0.0.1:4010/portal/acme?customer_session_token=till_cst_x', expires_at: '2026-11-26T02:00:00Z' };
    if (path.startsWith('/v1/benefit-grants/')) return { items: [{ id: 'g1', is_granted: true, is_revoked: false, granted_at: '2026-11-20T10:00:00Z', benefit: { description: 'Discord role', type: 'discord' } }] };
    if (path.startsWith('/v1/customer-meters/')) return { items: [{ id: 'm1', meter: { name: 'API calls' }, consumed_units: 120, credited_units: 1000, balance: 880 }] };
    if (method === 'GET' && path.startsWith('/v1/subscriptions/')) return { items: [subscription] };
    if (method === 'PATCH' && path === '/v1/subscriptions/sub_1') return { ...subscription, cancel_at_period_end: true, ends_at: subscription.current_period_end };
    return { items: [] };
  });
  fake.backend.openUrl = async (url) => {
    opened.push(url);
    return true;
  };
  return { ...fake, opened };
}

describe('the Orders tab', () => {
  it('filters one-time orders on the server with s, searches the rows with /, shows an order’s items, payments and refunds, and opens its invoice link', async () => {
    const fake = shop();
    const app = renderApp(fake.backend, { tab: 'Orders' });
    cleanup = app.unmount;
    await app.showing('2 orders');
    expect(app.lastFrame()).toContain('f refund · i invoice link · Enter details · / search · s show');
    await app.press('s');
    await app.showing('1 orders (one-time)');
    expect(fake.sent.at(-1)!.path).toContain('product_billing_type=one_time');
    await app.press('s', 's', '/');
    await app.showing('search:');
    await app.press('s', 't', 'i', 'c');
    await app.showing('1 orders (matching “stic”)');
    await app.press(KEY.enter, KEY.enter);
    const detail = await app.showing('Payments');
    expect(detail).toMatch(/Sticker · ada@example\.com · paid/);
    expect(detail).toMatch(/Items\n\s+25\.00 USD  Sticker/);
    expect(detail).toMatch(/Payments\n.*25\.00 USD  succeeded/);
    expect(detail).toMatch(/Refunds\n\s+None\./);
    expect(fake.sent.some((sent) => sent.path === '/v1/refunds/?order_id=ord_2&limit=100')).toBe(true);
    await app.press(KEY.escape);
    await app.showing('1 orders (matching');
    await app.press('i');
    await app.showing('Get a link to the invoice of order ord_2');
    await app.press('y');
    // On a line of its own, whole, to copy.
    const linked = await app.showing(/opened\s+in\s+your\s+browser/);
    const squeeze = (text: string) => text.replace(/\s+/g, '');
    expect(squeeze(linked)).toContain(squeeze('✓ Invoice link (1 hour): http://127.0.0.1:4010/v1/orders/ord_2/invoice.pdf?signature=s (opened in your browser)'));
    expect(fake.opened).toEqual(['http://127.0.0.1:4010/v1/orders/ord_2/invoice.pdf?signature=s']);
  });
});

describe('the Customers tab', () => {
  it('searches on the server, shows the customer’s subscriptions, grants, meters and orders, and opens a portal link after a confirmation', async () => {
    const fake = shop();
    const app = renderApp(fake.backend, { tab: 'Customers' });
    cleanup = app.unmount;
    await app.showing('ada@example.com');
    await app.press('/', 'n', 'o', 'b', 'o', 'd', 'y', KEY.enter);
    await app.showing('No customers here');
    expect(fake.sent.at(-1)!.path).toContain('&query=nobody');
    await app.press('/', ...Array(6).fill(KEY.backspace), KEY.enter);
    await app.showing(/1 customers\s/);
    await app.press('s');
    await app.showing('1 customers (subscribed)');
    expect(fake.sent.at(-1)!.path).toContain('active=true');
    await app.press(KEY.enter);
    const detail = await app.showing('Orders (latest 2)');
    expect(detail).toMatch(/Subscriptions \(1\)\n\s+Pro plan · 25\.00 USD\/month · active · renews 2026-12-20/);
    expect(detail).toMatch(/Benefit grants \(1\)\n\s+Discord role \(discord\) · granted/);
    expect(detail).toMatch(/Meters \(1\)\n\s+API calls · consumed 120 · credited 1,000 · balance 880/);
    await app.press(KEY.escape, 'p');
    await app.showing('Open a customer portal session for ada@example.com?');
    await app.press('y');
    const linked = (await app.showing('customer_session_token')).replace(/\s+/g, '');
    expect(linked).toContain('✓ Portal link (until 2026-11-26 02:00): http://127.0.0.1:4010/portal/acme?customer_session_token=till_cst_x (opened in your browser)'.replace(/\s+/g, ''));
    expect(fake.sent.find((sent) => sent.method === 'POST')).toEqual({ method: 'POST', path: '/v1/customer-sessions/', body: { customer_id: 'cus_1' } });
  });
});

describe('the Subscriptions tab', () => {
  it('cancels at the period end with a reason after a confirmation, refuses an uncancel that has nothing to take back, revokes with a confirmation, and shows the history', async () => {
    const fake = shop();
    const app = renderApp(fake.backend, { tab: 'Subscriptions' });
    cleanup = app.unmount;
    // The next step's whole day fits its column (with the time it was cut: "renews 2026-12-20 …").
    const list = await app.showing(/Pro plan\s+25\.00 USD\/mo\s+active\s+renews 2026-12-20/);
    expect(list).toMatch(/renews 2026-12-20\s*$/m);
    await app.press('u');
    await app.showing('✗ It is not set to cancel');
    await app.press('c');
    await app.showing(/› Reason\s+‹ \(none\) ›/);
    await app.press(KEY.right, KEY.right, KEY.down, 't', 'o', 'o', ' ', 'd', 'e', 'a', 'r', KEY.enter);
    await app.showing('Cancel Pro plan of ada@example.com at the end of its period?');
    await app.press('y');
    await app.showing('✓ Cancels at the end of its period, 2026-12-20');
    const patches = () => fake.sent.filter((sent) => sent.method === 'PATCH');
    expect(patches()).toEqual([{ method: 'PATCH', path: '/v1/subscriptions/sub_1', body: { cancel_at_period_end: true, customer_cancellation_reason: 'low_quality', customer_cancellation_comment: 'too dear' } }]);
    await app.press('x');
    await app.showing('Revoke Pro plan of ada@example.com now');
    await app.press(KEY.down, KEY.enter);
    await app.showing('End Pro plan of ada@example.com now and revoke its benefits?');
    await app.press('n');
    await app.showing('Revoke Pro plan of ada@example.com now');
    await app.press(KEY.escape);
    await until(() => !app.lastFrame()!.includes('Revoke'), 'the list');
    expect(patches()).toHaveLength(1);
    await app.press(KEY.enter);
    const history = await app.showing('History');
    expect(history).toMatch(/2026-11-20 10:00  started/);
    expect(history).toMatch(/subscription_create · 25\.00 USD · paid/);
    expect(history).toMatch(/Current period 2026-11-20 10:00 → 2026-12-20 10:00 · renews 2026-12-20/);
  });

  it('asks the server for one status at a time with s', async () => {
    const fake = shop();
    const app = renderApp(fake.backend, { tab: 'Subscriptions' });
    cleanup = app.unmount;
    await app.showing(/1 subscriptions\s/);
    await app.press('s');
    await app.showing('(active)');
    expect(fake.sent.at(-1)!.path).toContain('active=true');
    await app.press('s');
    await app.showing('(canceling)');
    expect(fake.sent.at(-1)!.path).toContain('cancel_at_period_end=true');
    await app.press('s', 's');
    await app.showing('(canceled)');
    expect(fake.sent.at(-1)!.path).toContain('status=canceled');
    expect(tabKey('Subscriptions')).toBe('5');
  });
});
