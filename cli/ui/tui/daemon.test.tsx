import { tabKey } from './App.js';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { v1Request } from '../../../daemon/testing/v1.js';
import { openProfileStore } from '../../auth/profiles.js';
import { apiBackend } from '../../commands/ui.js';
import { createOrganization, seller, type Seller } from '../../testing/catalog.js';
import { startReceiver, type Receiver } from '../../testing/receiver.js';
import { decide, tempConfigDir } from '../../testing/till.js';
import type { AppSetup } from './App.js';
import type { Organization } from './backend.js';
import { createLoginFlow } from './login-flow.js';
import { Root } from './Root.js';
import { KEY, renderApp, renderUi } from './testing.js';

/*
 * The terminal UI's new views against a real tilld (keys in, frames out): the in-app sign-in with `till login`'s
 * device flow, the Meters tab, editing a product, resending an event, and the organization's deliveries.
 */

let daemon: TestDaemon;
let acme: Seller;
let receiver: Receiver;
let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

beforeAll(async () => {
  daemon = await startTestDaemon({ TILL_DEVICE_CODE_INTERVAL: '1s', TILL_WEBHOOKS_ALLOW_PRIVATE: '1', TILL_WEBHOOKS_POLL_MS: '50', TILL_LISTEN_HEARTBEAT_MS: '500', TILL_LISTEN_POLL_MS: '100' });
  acme = await seller(daemon, 'Daemon Shop');
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await daemon?.close();
});

const v1 = async <T = any,>(method: string, path: string, body?: unknown): Promise<T> => {
  const response = await v1Request(daemon.url, acme.user.token, method, path, body);
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : null) as T;
};
const organizations = async (token: string) => (await apiBackend(daemon.url, token).request<{ items: Organization[] }>('GET', '/v1/organizations/?limit=100')).items;
const open = (organizationId = acme.organizationId) => {
  const app = renderApp(apiBackend(daemon.url, acme.user.token), { organizations: [{ id: organizationId, name: 'Daemon Shop', slug: 'daemon-shop' }], organizationId, tab: 'Events' });
  cleanup = app.unmount;
  return app;
};
const type = (text: string) => [...text];
const codeOn = (frame: string) => /one-time code: ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(frame)?.[1]?.replace('-', '');

describe('signing in inside the app', () => {
  const signIn = (configDir: string) => {
    const connect = async (token: string): Promise<AppSetup> => {
      const items = await organizations(token);
      return { backend: apiBackend(daemon.url, token), organizations: items, organizationId: items[0]!.id };
    };
    const flow = createLoginFlow(daemon.url, () => openProfileStore({ TILL_CONFIG_DIR: configDir }));
    const app = renderUi(<Root start={{ kind: 'sign-in', flow, connect }} color={false} flushMs={5} />, 15_000);
    cleanup = app.unmount;
    return app;
  };

  it('shows the code and URL with a spinner, and once the browser approves stores the session as till login does and opens the app', async () => {
    const configDir = tempConfigDir();
    const app = signIn(configDir);
    const prompt = await app.showing('Waiting for approval');
    expect(prompt).toContain(`Sign in to ${daemon.url}`);
    expect(prompt).toContain('Enter open the browser');
    const code = codeOn(prompt)!;
    expect(prompt).toContain(`${daemon.baseUrl}/device?user_code=${code}`);
    await app.showing('checked 1 time, every 1 s');
    await decide(daemon.url, acme.user.token, code, 'approve');
    const opened = await app.showing('● live');
    expect(opened).toContain('Daemon Shop');
    const config = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));
    expect(config.current_server).toBe(daemon.url);
    expect(config.profiles[daemon.url].user.email).toBe(acme.user.user.email);
    // A session of its own, not the one that approved it.
    expect(config.profiles[daemon.url].token).not.toBe(acme.user.token);
  });

  it('says so when the code is denied, and Enter asks for a new code', async () => {
    const app = signIn(tempConfigDir());
    const first = codeOn(await app.showing('Waiting for approval'))!;
    await decide(daemon.url, acme.user.token, first, 'deny');
    await app.showing('✗ The sign-in request was denied in the browser.');
    await app.showing('Enter ask for a new code');
    await app.press(KEY.enter);
    const again = await app.showing('Waiting for approval');
    expect(codeOn(again)).toMatch(/^[A-Z0-9]{8}$/);
    expect(codeOn(again)).not.toBe(first);
  });
});

describe('the Meters tab', () => {
  it('creates a meter from the form (the server’s refusal shown in it), charts its quantities by window and interval, and archives it', async () => {
    const app = open();
    await app.press(tabKey('Meters'));
    await app.showing('No meters yet');
    await app.press('n');
    await app.showing('New meter');
    // Two letters: the server refuses the name, and says why, in the form.
    await app.press(...type('AP'), KEY.down, KEY.down, ...type('name=api_call'), KEY.down, KEY.down, KEY.enter);
    await app.showing('Create meter “AP”');
    await app.press('y');
    expect(await app.showing('rejected the request', 15_000)).toMatch(/name: /);
    await app.press(KEY.up, KEY.up, KEY.up, KEY.up, ...type('I calls'), KEY.down, KEY.down, KEY.down, KEY.down, KEY.enter);
    const confirm = await app.showing('Create meter “API calls”');
    expect(confirm).toContain('Counts: name eq "api_call"');
    expect(confirm).toContain('Aggregation: count');
    await app.press('y');
    await app.showing('✓ Created meter “API calls”.', 15_000);
    const meters = (await v1<{ items: any[] }>('GET', `/meters/?organization_id=${acme.organizationId}`)).items;
    expect(meters).toEqual([expect.objectContaining({ name: 'API calls', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api_call' }] }, aggregation: { func: 'count' } })]);

    const customer = await v1<{ id: string }>('POST', '/customers/', { email: `m-${randomBytes(3).toString('hex')}@example.com`, organization_id: acme.organizationId });
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await v1('POST', '/events/ingest', {
      events: [
        { name: 'api_call', customer_id: customer.id, timestamp: hourAgo },
        { name: 'api_call', customer_id: customer.id, timestamp: hourAgo },
        { name: 'api_call', customer_id: customer.id },
        { name: 'other', customer_id: customer.id },
      ],
    });
    await app.press('c');
    const chart = await app.showing(/last 30 days by day · total 3\b/, 15_000);
    expect(chart).toMatch(/Total\s+3/);
    expect(chart).toContain('█');
    await app.press('w');
    await app.showing(/last 90 days by day · total 3\b/, 15_000);
    await app.press('w', 'i');
    const hourly = await app.showing(/last 24 hours by hour · total 3\b/, 15_000);
    // Hour buckets, labelled with the time; the newest at the bottom, the two events of an hour ago the longest bar.
    expect(hourly).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:00\s+█+\s+2/);
    await app.press(KEY.escape);
    // The list, not the chart (whose title names the meter too): an Esc read with the next key is a meta key.
    await app.showing('1 meters');
    await app.press('a');
    await app.showing('Archive meter “API calls”?');
    await app.press('y', 'y');
    await app.showing('✓ Archived “API calls”.', 15_000);
    const archived = (await v1<{ items: any[] }>('GET', `/meters/?organization_id=${acme.organizationId}`)).items;
    expect(archived[0].archived_at).toEqual(expect.any(String));
    await app.press('a');
    await app.showing('“API calls” is archived already.');
  });
});

describe('editing a product on the Products tab', () => {
  it('renames it and adds a price keeping the existing one, after a confirmation; refuses an interval change and shows the server’s refusal', async () => {
    const created = await v1<{ id: string; prices: { id: string }[] }>('POST', '/products/', {
      name: 'Editable plan',
      organization_id: acme.organizationId,
      recurring_interval: 'month',
      prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }],
    });
    const app = open();
    await app.press(tabKey('Products'));
    await app.showing('Editable plan');
    await app.press('e');
    const form = await app.showing('Edit product “Editable plan”');
    expect(form).toMatch(/Prices\s+1500:usd/);
    await app.press(KEY.down, KEY.down, ...type(':year'), KEY.enter);
    await app.showing('billing interval cannot change');
    await app.press(...Array(5).fill(KEY.backspace), ...type(', 1300:eur'), KEY.enter);
    await app.showing('Update product “Editable plan”');
    await app.press(KEY.escape);
    // An Esc read in one chunk with the next key is a meta key: let the form come back first.
    await app.showing('Edit product “Editable plan”');
    await app.press(KEY.up, KEY.up, ...Array(13).fill(KEY.backspace), ...type('Pr'), KEY.down, KEY.down, KEY.enter);
    await app.showing('Name: “Editable plan” → “Pr”');
    await app.press('y');
    expect(await app.showing('rejected the request', 15_000)).toMatch(/name: /);
    await app.press(KEY.up, KEY.up, ...type('o plan'), KEY.down, KEY.down, KEY.enter);
    const confirm = await app.showing('Name: “Editable plan” → “Pro plan”');
    expect(confirm).toContain('Prices: 1500:usd, 1300:eur (1 kept, 1 new)');
    await app.press('y', 'y');
    await app.showing('✓ Updated “Pro plan”.', 15_000);
    const product = await v1<{ name: string; prices: { id: string; price_currency: string; is_archived: boolean }[] }>('GET', `/products/${created.id}`);
    expect(product.name).toBe('Pro plan');
    const active = product.prices.filter((price) => !price.is_archived);
    expect(active.map((price) => price.price_currency).sort()).toEqual(['eur', 'usd']);
    expect(active.find((price) => price.price_currency === 'usd')!.id).toBe(created.prices[0]!.id);
  });
});

describe('resending an event and the organization’s deliveries', () => {
  it('resends the selected event to a chosen endpoint after a confirmation and shows how the endpoint answered; d lists only this organization’s deliveries', async () => {
    const endpoint = await v1<{ id: string }>('POST', '/webhooks/endpoints', { url: receiver.url, format: 'raw', events: ['customer.created'], organization_id: acme.organizationId });
    // Another organization of the same user, with an endpoint and a delivery of its own.
    const other = await createOrganization(acme.user, 'Elsewhere');
    const otherEndpoint = await v1<{ id: string }>('POST', '/webhooks/endpoints', { url: `${receiver.url}?other`, format: 'raw', events: ['customer.created'], organization_id: other.organizationId });
    await v1('POST', '/customers/', { email: `o-${randomBytes(3).toString('hex')}@example.com`, organization_id: other.organizationId });

    const app = open();
    await app.showing('● live');
    const email = `r-${randomBytes(3).toString('hex')}@example.com`;
    await v1('POST', '/customers/', { email, organization_id: acme.organizationId });
    await app.showing(/customer\.created\s+\S/, 15_000);
    const mine = () => receiver.received.filter((request) => request.path === '/hook' && request.body.includes(email));
    await expect.poll(() => mine().length, { timeout: 15_000 }).toBe(1);

    await app.press('/', ...type('customer.created'), KEY.enter);
    // The tab opened with the organization's history (an earlier test's customer too): this one is the newest, on top.
    await app.showing(/filter “customer\.created” \(\d+\)/);
    await app.press('r');
    const picker = await app.showing('to which endpoint?');
    expect(picker).toContain(receiver.url);
    expect(picker).not.toContain(`${receiver.url}?other`);
    await app.press(KEY.enter);
    await app.showing(`Resend customer.created`);
    await app.press('y', 'y');
    await app.showing(/✓ Resent customer\.created: 200 in \d+ ms/, 15_000);
    expect(mine()).toHaveLength(2);
    expect(mine()[1]!.headers['webhook-id']).toBe(mine()[0]!.headers['webhook-id']);

    await app.press(tabKey('Webhooks'));
    await app.showing(receiver.url);
    await app.press('d');
    const deliveries = await app.showing(/2 deliveries/, 15_000);
    expect(deliveries).toContain(endpoint.id.slice(0, 19));
    expect(deliveries).not.toContain(otherEndpoint.id.slice(0, 19));
  });
});
