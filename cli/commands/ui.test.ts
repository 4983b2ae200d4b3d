import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { v1Request } from '../../daemon/testing/v1.js';
import { seller, type Seller } from '../testing/catalog.js';
import { decide, TILL_BIN, tempConfigDir, till, tillEnv } from '../testing/till.js';

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

    await ui.keys('3');
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
    await ui.keys('5');
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
