import { tabKey } from '../App.js';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeBackend, KEY, renderApp, until, type Sent } from '../testing.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

const product = (id: string, name: string, archived = false) => ({
  id,
  name,
  is_archived: archived,
  recurring_interval: 'month',
  prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd', is_archived: false }],
});

/** A little catalog server: products archive, discounts are created or refused, orders refund. */
function store() {
  const products = [product('prod_1', 'Pro plan'), product('prod_2', 'Old plan', true)];
  const discounts: Record<string, unknown>[] = [];
  const orders = [{ id: 'ord_1', created_at: '2026-11-23T03:00:00Z', customer: { email: 'ada@example.com' }, total_amount: 1200, refundable_amount: 1000, currency: 'usd', status: 'paid' }];
  let refuseNext: string | undefined;
  const fake = fakeBackend(async ({ method, path, body }: Sent) => {
    if (refuseNext) {
      const message = refuseNext;
      refuseNext = undefined;
      throw new Error(message);
    }
    if (method === 'GET' && path.startsWith('/v1/products/')) return { items: products };
    if (method === 'PATCH' && path === '/v1/products/prod_1') {
      Object.assign(products[0]!, body);
      return products[0];
    }
    if (method === 'POST' && path === '/v1/products/') {
      products.unshift({ ...product('prod_3', String((body as { name: string }).name)) });
      return products[0];
    }
    if (method === 'GET' && path.startsWith('/v1/discounts/')) return { items: discounts };
    if (method === 'POST' && path === '/v1/discounts/') {
      discounts.unshift({ id: 'disc_1', redemptions_count: 0, ...(body as object) });
      return discounts[0];
    }
    if (method === 'GET' && path.startsWith('/v1/orders/')) return { items: orders };
    if (method === 'POST' && path === '/v1/refunds/') {
      orders[0]!.refundable_amount -= (body as { amount: number }).amount;
      return { id: 'ref_1' };
    }
    return { items: [] };
  });
  return { ...fake, refuse: (message: string) => (refuseNext = message) };
}

const open = (fake: ReturnType<typeof store>) => {
  const app = renderApp(fake.backend);
  cleanup = app.unmount;
  return app;
};
const writes = (sent: Sent[]) => sent.filter((request) => request.method !== 'GET');
const type = (text: string) => [...text];

describe('the Products tab', () => {
  it('lists products with prices and archives the selected one after a confirmation, sending it once', async () => {
    const fake = store();
    const app = open(fake);
    await app.showing('● live');
    await app.press(tabKey('Products'));
    const list = await app.showing('Pro plan');
    expect(list).toContain('15.00 USD');
    expect(list).toMatch(/Old plan.*archived/);
    expect(fake.sent[0]!.path).toContain('organization_id=org_A');
    await app.press('a');
    await app.showing('Archive product “Pro plan”');
    await app.press('y', 'y', 'y');
    await app.showing('✓ Archived “Pro plan”.');
    expect(writes(fake.sent)).toEqual([{ method: 'PATCH', path: '/v1/products/prod_1', body: { is_archived: true } }]);
    await app.frameUntil((frame) => /Pro plan.*archived/.test(frame));
  });

  it('refuses to archive an archived product, and cancels an archive with n', async () => {
    const fake = store();
    const app = open(fake);
    await app.press(tabKey('Products'));
    await app.showing('Pro plan');
    await app.press(KEY.down, 'a');
    await app.showing('“Old plan” is archived already.');
    await app.press(KEY.up, 'a');
    await app.showing('Confirm?');
    await app.press('n');
    await app.frameUntil((frame) => frame.includes('Pro plan') && !frame.includes('Confirm?'));
    expect(writes(fake.sent)).toEqual([]);
  });

  it('creates a product from the form', async () => {
    const fake = store();
    const app = open(fake);
    await app.press(tabKey('Products'));
    await app.showing('Pro plan');
    await app.press('n');
    await app.showing('New product');
    await app.press(...type('Team plan'), KEY.down, KEY.down, ...type('4900:usd:month'), KEY.enter);
    await app.showing('Create product “Team plan”');
    await app.press('y');
    await app.showing('✓ Created product “Team plan”.');
    expect(writes(fake.sent)[0]).toMatchObject({
      method: 'POST',
      path: '/v1/products/',
      body: { name: 'Team plan', organization_id: 'org_A', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 4900, price_currency: 'usd' }] },
    });
  });
});

describe('editing a product', () => {
  it('starts from the product as it is, refuses an edit that changes nothing, and sends only what changed, once', async () => {
    const fake = store();
    const app = open(fake);
    await app.press(tabKey('Products'));
    await app.showing('Pro plan');
    await app.press('e');
    const form = await app.showing('Edit product “Pro plan” (billed every month');
    expect(form).toMatch(/Name\s+Pro plan/);
    expect(form).toMatch(/Prices\s+1500:usd/);
    await app.press(KEY.down, KEY.down, KEY.enter);
    await app.showing('✗ Nothing changed.');
    await app.press(KEY.up, KEY.up, ...type(' Plus'), KEY.down, ...type('For teams'), KEY.down, KEY.enter);
    const confirm = await app.showing('Update product “Pro plan” (prod_1):');
    expect(confirm).toContain('Name: “Pro plan” → “Pro plan Plus”');
    expect(confirm).toContain('Description: “For teams”');
    expect(confirm).not.toContain('Prices:');
    await app.press('y', 'y');
    await app.showing('✓ Updated “Pro plan Plus”.');
    expect(writes(fake.sent)).toEqual([{ method: 'PATCH', path: '/v1/products/prod_1', body: { name: 'Pro plan Plus', description: 'For teams' } }]);
  });
});

describe('the Discounts tab', () => {
  it('checks the form, shows the server’s refusal in it, and creates the discount once it is accepted', async () => {
    const fake = store();
    const app = open(fake);
    await app.press(tabKey('Discounts'));
    await app.showing('No discounts yet');
    await app.press('n');
    await app.showing('New discount');
    await app.press(...type('Launch'), KEY.down, ...type('12'), KEY.enter, KEY.enter, KEY.enter, KEY.enter, KEY.enter);
    await app.showing('expected AMOUNT:CURRENCY');
    await app.press(KEY.up, KEY.up, KEY.up, KEY.up, KEY.backspace, KEY.backspace, ...type('10%'), KEY.down, KEY.right, KEY.down, KEY.down, ...type('LAUNCH10'), KEY.down, KEY.enter);
    await app.showing('Create discount “Launch”: 10% off, forever');
    fake.refuse('http://127.0.0.1:4010 rejected the request: code: already in use');
    await app.press('y');
    await app.showing('✗ http://127.0.0.1:4010 rejected the request: code: already in use');
    expect(app.lastFrame()).toContain('LAUNCH10');
    await app.press(KEY.enter);
    await app.showing('Confirm?');
    await app.press(KEY.enter);
    const list = await app.showing('✓ Created discount “Launch”.');
    expect(list).toMatch(/Launch\s+LAUNCH10\s+10%\s+forever/);
    const posts = writes(fake.sent);
    expect(posts).toHaveLength(2);
    expect(posts[1]).toEqual({ method: 'POST', path: '/v1/discounts/', body: { name: 'Launch', organization_id: 'org_A', type: 'percentage', basis_points: 1000, duration: 'forever', code: 'LAUNCH10' } });
  });
  it('takes keys that arrive in one read (a paste, key repeat, SSH, a loaded machine) as the keys they are, and sends no control character', async () => {
    const fake = store();
    const app = open(fake);
    await app.press(tabKey('Discounts'));
    await app.showing('No discounts yet');
    // One read each: the key that opens the form with the text after it; Backspace runs inside text; Ctrl-S after text.
    await app.press('nLaunch!!!\u007F\u007F\u007F');
    await app.showing(/Name\s+Launch\s/);
    await app.press(`${KEY.down}10%%\b\u0013`);
    await app.showing('Create discount “Launch”: 10% off, once');
    await app.press('y');
    await app.showing('✓ Created discount “Launch”.');
    const posts = writes(fake.sent);
    expect(posts).toEqual([{ method: 'POST', path: '/v1/discounts/', body: expect.objectContaining({ name: 'Launch', basis_points: 1000 }) }]);
    expect(JSON.stringify(posts)).not.toMatch(/\\u00[01]|\\u007f/i);
  });
});

describe('the Refunds tab', () => {
  it('shows orders with their refundable amount and refunds one after a confirmation saying what happens', async () => {
    const fake = store();
    const app = open(fake);
    await app.press(tabKey('Orders'));
    const list = await app.showing('ada@example.com');
    expect(list).toMatch(/12\.00 USD\s+10\.00 USD\s+paid/);
    await app.press('f');
    await app.showing('Refund order ord_1');
    await app.press(KEY.backspace, KEY.backspace, KEY.backspace, KEY.backspace, ...type('5000'), KEY.down, KEY.down, KEY.right, KEY.enter);
    await app.showing('At most 10.00 USD (1000) is refundable.');
    await app.press(KEY.up, KEY.up, KEY.backspace, KEY.backspace, KEY.down, KEY.down, KEY.enter);
    const confirm = await app.showing('Refund 0.50 USD');
    expect(confirm).toContain('benefits revoked');
    await app.press('y');
    await app.showing('✓ Refunded 0.50 USD.');
    await until(() => writes(fake.sent).length === 1, 'the refund');
    expect(writes(fake.sent)[0]).toEqual({ method: 'POST', path: '/v1/refunds/', body: { order_id: 'ord_1', amount: 50, reason: 'customer_request', revoke_benefits: true } });
    await app.showing('9.50 USD');
  });
});

describe('the Webhooks and Deliveries tabs', () => {
  function hooks() {
    const endpoints = [{ id: 'we_1', url: 'https://shop.example.com/hooks', format: 'raw', events: ['order.paid'], enabled: false, disabled_reason: 'failing' }];
    const deliveries = [{ id: 'wd_1', created_at: '2026-11-23T03:00:00Z', succeeded: false, http_code: 500, duration_ms: 120, attempt: 3, webhook_endpoint_id: 'we_1', webhook_event: { id: 'whe_1', type: 'order.paid' } }];
    return fakeBackend(({ method, path, body }) => {
      if (method === 'GET' && path.startsWith('/v1/webhooks/endpoints')) return { items: endpoints };
      if (method === 'POST' && path === '/v1/webhooks/endpoints') {
        endpoints.push({ id: 'we_2', enabled: true, disabled_reason: '', ...(body as { url: string; format: string; events: string[] }) });
        return { ...endpoints.at(-1), secret: 'whsec_created' };
      }
      if (method === 'PATCH' && path === '/v1/webhooks/endpoints/we_1/secret') return { ...endpoints[0], secret: 'whsec_rotated' };
      if (method === 'GET' && path.startsWith('/v1/webhooks/deliveries')) return { items: path.includes('endpoint_id=we_1') ? deliveries : [] };
      if (method === 'POST' && path.startsWith('/v1/webhooks/events/')) return null;
      return { items: [] };
    });
  }

  it('lists endpoints with their health, creates one showing its secret, and rotates a secret after a confirmation', async () => {
    const fake = hooks();
    const app = renderApp(fake.backend);
    cleanup = app.unmount;
    await app.press(tabKey('Webhooks'));
    const list = await app.showing('https://shop.example.com/hooks');
    expect(list).toContain('disabled (failing)');
    await app.press('s');
    await app.showing('Replace the signing secret of https://shop.example.com/hooks?');
    await app.press('y');
    await app.showing('✓ New signing secret: whsec_rotated');
    await app.press('n');
    await app.showing('New webhook endpoint');
    await app.press(...type('https://new.example.com/in'), KEY.down, ...type('order.paid,refund.created'), KEY.down, KEY.enter);
    await app.showing('Events: order.paid, refund.created');
    await app.press('y');
    await app.showing('its signing secret is whsec_created');
    expect(writes(fake.sent)).toEqual([
      { method: 'PATCH', path: '/v1/webhooks/endpoints/we_1/secret', body: undefined },
      { method: 'POST', path: '/v1/webhooks/endpoints', body: { url: 'https://new.example.com/in', events: ['order.paid', 'refund.created'], format: 'raw', organization_id: 'org_A' } },
    ]);
  });

  it('lists the organization’s deliveries (to its endpoints) with status and timing on d, and redelivers one to its endpoint', async () => {
    const fake = hooks();
    const app = renderApp(fake.backend);
    cleanup = app.unmount;
    await app.press(tabKey('Webhooks'));
    await app.showing('https://shop.example.com/hooks');
    await app.press('d');
    const list = await app.showing('order.paid');
    expect(list).toContain('Recent deliveries to this organization’s endpoints');
    expect(fake.sent.find((request) => request.path.startsWith('/v1/webhooks/deliveries'))?.path).toBe('/v1/webhooks/deliveries?endpoint_id=we_1&limit=100');
    expect(list).toMatch(/order\.paid\s+✗ 500\s+120\s+3\s+we_1/);
    await app.press('R');
    await app.showing('Send order.paid (whe_1) again to endpoint we_1?');
    await app.press('y');
    await app.showing('✓ Queued order.paid for redelivery.');
    expect(writes(fake.sent)).toEqual([{ method: 'POST', path: '/v1/webhooks/events/whe_1/redeliver?endpoint_id=we_1', body: undefined }]);
    await app.press('d');
    await app.showing('Webhook endpoints (d: their recent deliveries)');
  });
});

describe('a list whose filter changes quickly', () => {
  it('shows the answer of the filter now chosen, not a slower answer of one passed on the way', async () => {
    // The "past due" list answers last: before, its empty answer replaced the "canceled" list it came after.
    let releasePastDue: () => void = () => undefined;
    const pastDueHeld = new Promise<void>((resolve) => (releasePastDue = resolve));
    let pastDueAnswered = false;
    const fake = fakeBackend(async ({ path }: Sent) => {
      if (!path.startsWith('/v1/subscriptions/')) return { items: [] };
      if (path.includes('status=past_due')) {
        await pastDueHeld;
        setImmediate(() => (pastDueAnswered = true));
        return { items: [] };
      }
      const canceled = { id: 'sub_1', status: 'canceled', customer: { email: 'ada@example.com' }, product: { name: 'Pro plan' }, amount: 1500, currency: 'usd', recurring_interval: 'month' };
      return { items: path.includes('status=canceled') ? [canceled] : [] };
    });
    const app = renderApp(fake.backend, { tab: 'Subscriptions' });
    cleanup = app.unmount;
    await app.showing('No subscriptions here.');
    // all → active → canceling → past due → canceled, pressed at once.
    await app.press('s', 's', 's', 's');
    await until(() => fake.sent.some((request) => request.path.includes('status=canceled')), 'the canceled list to be asked for');
    await app.showing(/1 subscriptions \(canceled\)/);
    releasePastDue();
    await until(() => pastDueAnswered, 'the held answer to be taken');
    // The held answer is in; a frame drawn from it would come within the app's 5 ms flush: the canceled list stays.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(app.lastFrame()).toMatch(/1 subscriptions \(canceled\)/);
    expect(app.lastFrame()).toContain('ada@example.com');
  });
});
