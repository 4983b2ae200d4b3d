import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { v1Request } from '../../daemon/testing/v1.js';
import { seller, type Seller } from '../testing/catalog.js';
import { decide, TILL_BIN, tempConfigDir, till, tillEnv } from '../testing/till.js';
import { tabKey } from '../ui/tui/App.js';

let daemon: TestDaemon;
let acme: Seller;
/** A tmux server of this file's own, so nothing else's sessions are touched. */
const socket = `till-ui-${randomBytes(4).toString('hex')}`;
const tmux = (...args: string[]) => execa('/usr/bin/tmux', ['-L', socket, ...args], { reject: false });

/** Opens `till ui` in an 80×24 tmux pane with this environment. */
async function openUi(name: string, env: Record<string, string>, args = ['ui']) {
  const vars = Object.entries(tillEnv({ ...env, TERM: 'xterm-256color' })).map(([key, value]) => `${key}=${value}`);
  const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
  // The pane stays after `till` exits (with its exit code shown), to read what it said.
  const command = ['env', '-i', ...vars, process.execPath, TILL_BIN, ...args].map(quote).join(' ');
  await tmux('new-session', '-d', '-s', name, '-x', '80', '-y', '24', `${command}; echo "[exit $?]"; sleep 600`);
  const screen = async () => (await tmux('capture-pane', '-p', '-t', name)).stdout;
  const showing = async (text: string | RegExp) => {
    await expect.poll(screen, { timeout: 60_000, interval: 50 }).toMatch(text);
    return screen();
  };
  const keys = (...keys: string[]) => tmux('send-keys', '-t', name, ...keys);
  return { screen, showing, keys };
}

beforeAll(async () => {
  daemon = await startTestDaemon({ TILL_LISTEN_HEARTBEAT_MS: '500', TILL_LISTEN_POLL_MS: '200', TILL_DEVICE_CODE_INTERVAL: '1s' });
  acme = await seller(daemon, 'Terminal Shop');
});
afterAll(async () => {
  await tmux('kill-server');
  await daemon?.close();
});

describe('till ui', () => {
  it('refuses off a terminal, naming the commands to use instead (exit 2)', async () => {
    const result = await till(['ui'], acme.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('needs an interactive terminal');
    expect(result.stderr).toContain('till listen');
  });

  it('asks to sign in again inside the app when the stored session has ended, and quits on q', async () => {
    const configDir = tempConfigDir();
    writeFileSync(join(configDir, 'config.json'), JSON.stringify({ current_server: daemon.url, profiles: { [daemon.url]: { token: 'ended-session-token', signed_in_at: new Date().toISOString() } } }), { mode: 0o600 });
    const ui = await openUi('ended', { TILL_SERVER: daemon.url, TILL_CONFIG_DIR: configDir });
    const screen = await ui.showing('Waiting for approval');
    expect(screen).toContain('session on');
    expect(screen).toMatch(/one-time code: [A-Z0-9]{4}-[A-Z0-9]{4}/);
    await ui.keys('q');
    await ui.showing('[exit 0]');
  }, 120_000);

  it('opens for `till` alone on a terminal, and quits on q', async () => {
    const ui = await openUi('bare', acme.env, []);
    await ui.showing('● live');
    await ui.keys('q');
    await ui.showing('[exit 0]');
  }, 120_000);

  it('opens on the Dashboard with today’s revenue and orders, MRR, active subscriptions and the failed payments and checkouts, live as events arrive; the Events tab opens with the history', async () => {
    const shop = await seller(daemon, 'Dashboard Shop');
    const api = (method: string, path: string, body?: unknown) => v1Request(daemon.url, shop.user.token, method, path, body);
    const paid = await till(['trigger', 'order.paid', '--yes', '--json'], shop.env);
    expect(paid.exitCode, paid.stderr).toBe(0);
    // A declined card: a failed payment (the checkout stays open for another card; a checkout fails only when a
    // processing payment fails later, which the Dashboard's ink test covers).
    const product = (await (await api('POST', '/products/', { name: 'Declined thing', organization_id: shop.organizationId, prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] })).json()) as { id: string };
    const checkout = (await (await api('POST', '/checkouts/', { products: [product.id], customer_email: 'declined@example.com' })).json()) as { client_secret: string };
    const refused = await fetch(`${daemon.url}/v1/checkouts/client/${checkout.client_secret}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ confirmation_token_id: 'tok_chargeDeclined', customer_name: 'Dee Clined', customer_billing_address: { line1: '1 Main Street', city: 'Springfield', postal_code: '12345', state: 'IL', country: 'US' } }),
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);

    const ui = await openUi('dashboard', shop.env);
    await ui.showing(/Failed payments[^\n]*\n.*9\.00 USD  Your card was declined\./);
    let screen = await ui.showing('r reload · ? help · q quit');
    expect(screen).toMatch(/Revenue\s+25\.00 USD\s+1 order\b/);
    expect(screen).toMatch(/Failed checkouts[^\n]*\n\s+None\./);
    expect(screen).toMatch(/Active subscriptions\s+0\s/);
    for (const line of screen.split('\n')) expect(line.length).toBeLessThanOrEqual(80);

    // Bought while the Dashboard is open: the stream brings the events, the figures follow.
    const subscribed = await till(['trigger', 'subscription.created', '--yes', '--json'], shop.env);
    expect(subscribed.exitCode, subscribed.stderr).toBe(0);
    screen = await ui.showing(/Active subscriptions\s+1\s/);
    await ui.showing(/Revenue\s+50\.00 USD\s+2 orders/);
    expect(await ui.showing(/MRR\s+25\.00 USD\s+[▁-█]+/)).toMatch(/Today/);

    // The Events tab starts with what happened before the app opened, then follows.
    await ui.keys(tabKey('Events'));
    await ui.showing(/subscription\.created/);
    // The footer follows the tab a frame later (its hints are set once the tab has drawn): wait for both.
    screen = await ui.showing(/subscription\.created(.|\n)*r resend · p pause/);
    expect(screen).toMatch(/order\.paid/);
    expect(screen).toMatch(/checkout\.created/);
    for (const line of screen.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    await ui.keys('q');
    await ui.showing('[exit 0]');
  }, 300_000);

  it('drives the Orders, Customers and Subscriptions tabs: filter, search, details, invoice and portal links, cancel, uncancel and revoke, in a real terminal against a real daemon', async () => {
    const shop = await seller(daemon, 'Ops Shop');
    const api = async <T,>(method: string, path: string, body?: unknown) => (await (await v1Request(daemon.url, shop.user.token, method, path, body)).json()) as T;
    for (const trigger of ['subscription.created', 'order.paid']) {
      const result = await till(['trigger', trigger, '--yes', '--json'], shop.env);
      expect(result.exitCode, result.stderr).toBe(0);
    }
    const [subscription] = (await api<{ items: { id: string; customer: { email: string } }[] }>('GET', `/subscriptions/?organization_id=${shop.organizationId}`)).items;
    const subscriber = subscription!.customer.email;
    const fits = (screen: string) => {
      for (const line of screen.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
      return screen;
    };

    const ui = await openUi('ops', shop.env);
    await ui.showing('Failed payments');
    // Orders: both, then the one-time one only; its items, payments and refunds; its invoice link.
    await ui.keys(tabKey('Orders'));
    fits(await ui.showing(/2 orders/));
    await ui.keys('s');
    await ui.showing('1 orders (one-time)');
    await ui.keys('s', 's');
    await ui.showing(/2 orders\s/);
    await ui.keys('/');
    await ui.showing('search:');
    await ui.keys('-l', subscriber.slice(0, 16));
    await ui.keys('Enter');
    await ui.showing(`1 orders (matching “${subscriber.slice(0, 16)}”)`);
    await ui.keys('Enter');
    let screen = fits(await ui.showing(/Payments\n.*succeeded/));
    expect(screen).toMatch(/Items\n\s+25\.00 USD  \S/);
    expect(screen).toMatch(/Refunds\n\s+None\./);
    expect(screen).toContain('J raw JSON');
    await ui.keys('Escape');
    await ui.showing(/1 orders \(matching/);
    await ui.keys('i');
    await ui.showing('Get a link to the invoice');
    await ui.keys('y');
    // The link gets lines of its own, whole, to copy.
    screen = await ui.showing(/✓ Invoice link \(1 hour\):\s+http/);

    // Customers: search on the server, the customer's state, a portal link.
    await ui.keys(tabKey('Customers'));
    await ui.showing(/2 customers/);
    await ui.keys('/');
    await ui.showing('search (Enter):');
    await ui.keys('-l', subscriber);
    await ui.keys('Enter');
    await ui.showing(/1 customers \(matching/);
    await ui.keys('Enter');
    screen = fits(await ui.showing(/Orders \(latest 1\)\n.*paid/));
    expect(screen).toMatch(/Subscriptions \(1\)\n\s+Triggered plan · 25\.00 USD\/month · active · renews/);
    expect(screen).toContain('Benefit grants (0)');
    expect(screen).toContain('Meters (0)');
    await ui.keys('Escape');
    await ui.keys('p');
    await ui.showing('Open a customer portal session');
    await ui.keys('y');
    await ui.showing(/✓ Portal link \(until [^)]+\):\s+http\S+/);

    // Subscriptions: cancel with a reason, take it back, revoke; the history says what happened.
    await ui.keys(tabKey('Subscriptions'));
    fits(await ui.showing(/Triggered plan\s+25\.00 USD\/mo\s+active\s+renews/));
    await ui.keys('u');
    await ui.showing('✗ It is not set to cancel');
    await ui.keys('c');
    await ui.showing(/› Reason\s+‹ \(none\) ›/);
    await ui.keys('Right');
    await ui.showing(/› Reason\s+‹ customer_service ›/);
    await ui.keys('C-s');
    // The confirmation wraps the customer's long email: wait for its last line.
    await ui.showing(/Cancel Triggered plan of[\s│]+\S+@example\.com at the end of its[\s│]+period\?(.|\n)*Confirm\? y\/Enter yes/);
    await ui.keys('y');
    await ui.showing('✓ Cancels at the end of its period');
    let stored = await api<{ cancel_at_period_end: boolean; customer_cancellation_reason: string; status: string }>('GET', `/subscriptions/${subscription!.id}`);
    expect(stored).toMatchObject({ cancel_at_period_end: true, customer_cancellation_reason: 'customer_service', status: 'active' });
    await ui.keys('s', 's');
    await ui.showing(/1 subscriptions \(canceling\)/);
    await ui.keys('u');
    await ui.showing('Take back the cancellation');
    await ui.keys('y');
    await ui.showing('✓ Renews on');
    await ui.showing(/No subscriptions here/);
    await ui.keys('s', 's', 's', 's');
    await ui.showing(/Triggered plan\s+25\.00 USD\/mo\s+active\s+renews/);
    await ui.keys('x');
    await ui.showing(/Revoke Triggered plan of/);
    await ui.keys('C-s');
    await ui.showing(/now and revoke its[\s│]+benefits\?|now and revoke its benefits\?/);
    await ui.showing('Confirm? y/Enter yes');
    await ui.keys('y');
    await ui.showing('✓ Ended now; its benefits are revoked.');
    stored = await api('GET', `/subscriptions/${subscription!.id}`);
    expect(stored.status).toBe('canceled');
    await ui.keys('s', 's', 's');
    await ui.showing(/1 subscriptions \(canceled\)/);
    await ui.keys('Enter');
    screen = fits(await ui.showing(/History\n(.*\n)*.*ended/));
    expect(screen).toMatch(/\d\d:\d\d  started\n/);
    expect(screen).toMatch(/subscription_create · 25\.00 USD · paid/);
    expect(screen).toMatch(/canceled/);
    await ui.keys('Escape');
    await ui.keys('q');
    await ui.showing('[exit 0]');
  }, 300_000);

  it('signs in inside the app, follows live events, filters and inspects them, creates a discount and refunds an order, in a real terminal against a real daemon', async () => {
    // Not signed in: the device-code sign-in of `till login`, inside the app.
    const configDir = tempConfigDir();
    const ui = await openUi('operator', { TILL_SERVER: daemon.url, TILL_CONFIG_DIR: configDir });
    const prompt = await ui.showing('Waiting for approval');
    expect(prompt).toContain(`Sign in to ${daemon.url}`);
    const code = /one-time code: ([A-Z0-9]{4})-([A-Z0-9]{4})/.exec(prompt);
    expect(code, prompt).not.toBeNull();
    // The browser's part, over HTTP: the signed-in seller approves the code.
    await decide(daemon.url, acme.user.token, `${code![1]}${code![2]}`, 'approve');
    const start = await ui.showing('● live');
    expect(start).toContain('Terminal Shop');
    for (const line of start.split('\n')) expect(line.length).toBeLessThanOrEqual(80);

    const email = `tui-${randomBytes(3).toString('hex')}@example.com`;
    const created = await v1Request(daemon.url, acme.user.token, 'POST', '/customers/', { email, organization_id: acme.organizationId });
    expect(created.status).toBe(201);
    // The app opens on the Dashboard; 2 is the live Events tab.
    await ui.showing('Failed checkouts');
    await ui.keys('2');
    await ui.showing(/customer\.created/);

    // Each key waits for the screen that it is meant for: on a loaded machine a key sent early lands elsewhere.
    await ui.keys('/');
    await ui.showing('filter (type or text)');
    await ui.keys('-l', 'customer.created');
    await ui.showing('filter (type or text): customer.created');
    await ui.keys('Enter');
    await ui.showing('filter “customer.created” (1)');
    await ui.keys('Enter');
    await ui.showing(`"email": "${email}"`);
    await ui.keys('Escape');
    await ui.showing(/TIME\s+TYPE/);

    await ui.keys(tabKey('Discounts'));
    await ui.showing('No discounts yet');
    await ui.keys('n');
    await ui.showing('New discount');
    await ui.keys('-l', 'Terminal ten');
    await ui.showing(/› Name\s+Terminal ten/);
    await ui.keys('Down');
    await ui.showing(/› Amount off/);
    await ui.keys('-l', '10%');
    await ui.showing(/› Amount off\s+10%/);
    await ui.keys('C-s');
    await ui.showing('Create discount “Terminal ten”: 10% off, once');
    await ui.keys('y');
    await ui.showing('✓ Created discount “Terminal ten”.');
    const list = await v1Request(daemon.url, acme.user.token, 'GET', `/discounts/?organization_id=${acme.organizationId}`);
    const discounts = ((await list.json()) as { items: { name: string; basis_points: number }[] }).items;
    expect(discounts).toEqual([expect.objectContaining({ name: 'Terminal ten', basis_points: 1000 })]);

    // An order to refund: `till trigger order.paid` buys a product through a sandbox checkout.
    const triggered = await till(['trigger', 'order.paid', '--yes', '--json'], acme.env);
    expect(triggered.exitCode, triggered.stderr).toBe(0);
    await ui.keys(tabKey('Orders'));
    await ui.showing(/paid/);
    await ui.keys('f');
    await ui.showing('Refund order');
    await ui.keys('C-s');
    await ui.showing('Confirm?');
    await ui.keys('y');
    await ui.showing(/✓ Refunded/);
    const orders = await v1Request(daemon.url, acme.user.token, 'GET', `/orders/?organization_id=${acme.organizationId}`);
    const order = ((await orders.json()) as { items: { status: string; refundable_amount: number }[] }).items[0]!;
    expect(order).toMatchObject({ status: 'refunded', refundable_amount: 0 });

    await ui.keys('q');
    await ui.showing('[exit 0]');
    // The session signed in inside the app is the one the commands use now.
    const whoami = await till(['whoami', '--json'], { TILL_SERVER: daemon.url, TILL_CONFIG_DIR: configDir });
    expect(whoami.exitCode, whoami.stderr).toBe(0);
    expect(JSON.parse(whoami.stdout).user.email).toBe(acme.user.user.email);
    // A generous bound for a machine under load: every step above waits for its screen, none for a fixed time.
  }, 300_000);
});
