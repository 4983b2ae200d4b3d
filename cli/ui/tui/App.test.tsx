import { afterEach, describe, expect, it } from 'vitest';
import { tabKey, tabLabels } from './App.js';
import { fitHints } from './hints.js';
import { anEvent, fakeBackend, KEY, renderApp, until } from './testing.js';

const idle = () => fakeBackend(({ path }) => (path.startsWith('/v1/organizations') ? { items: [] } : { items: [] }));
let cleanup: (() => void) | undefined;
const open = (backend: ReturnType<typeof fakeBackend>['backend'], tab = 'Events') => {
  const app = renderApp(backend, { tab });
  cleanup = app.unmount;
  return app;
};
afterEach(() => cleanup?.());

describe('the terminal UI shell', () => {
  it('shows the server, the organization, the stream state, the tabs and the Events keys, within 80 columns', async () => {
    const fake = idle();
    const app = open(fake.backend);
    const frame = await app.showing('● live');
    expect(frame).toContain('http://127.0.0.1:4010');
    expect(frame).toContain('Acme Store');
    expect(frame).toMatch(/1 Dash(board)?.*2 Events.*Prod.*Disc.*Meters.*(Webh|H)ooks/);
    expect(frame).toContain('r resend · p pause');
    expect(frame).toContain('Waiting for events');
    // ink-testing-library draws 100 columns; the tmux test checks 80.
    for (const line of frame.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
    expect(fake.streams[0]!.organizationId).toBe('org_A');
  });

  it('names the tabs in full when the terminal is wide enough, and shortly at 80 columns', () => {
    expect(tabLabels(200).join('')).toMatch(/ 1 Dashboard  2 Events /);
    expect(tabLabels(80).join('').length).toBeLessThanOrEqual(80);
  });

  it('keeps whole key hints that fit, always ending with the help and quit keys', () => {
    expect(fitHints('a one · b two · c three', 80, '? help · q quit')).toBe('a one · b two · c three · ? help · q quit');
    expect(fitHints('a one · b two · c three', 28, '? help · q quit')).toBe('a one · ? help · q quit');
    expect(fitHints('a one · b two', 12)).toBe('a one');
  });

  it('shows a dropped stream as reconnecting and live again once it resumes', async () => {
    const fake = idle();
    const app = open(fake.backend);
    await app.showing('● live');
    fake.state({ kind: 'reconnecting', reason: 'ECONNRESET' });
    await app.showing('reconnecting (ECONNRESET)');
    fake.state({ kind: 'live' });
    await app.frameUntil((frame) => frame.includes('● live') && !frame.includes('reconnecting'));
  });

  it('shows every key on ? and closes the help on any key', async () => {
    const app = open(idle().backend);
    await app.showing('● live');
    await app.press('?');
    const help = await app.showing('Keys');
    expect(help).toContain('o switch organization');
    expect(help).toContain('Discounts:');
    await app.press('x');
    await app.showing('Waiting for events');
  });

  it('switches the organization with o and follows the new one’s stream', async () => {
    const fake = fakeBackend(({ path }) => (path.startsWith('/v1/organizations') ? { items: [{ id: 'org_A', name: 'Acme Store', slug: 'acme' }, { id: 'org_B', name: 'Beta Labs', slug: 'beta' }] } : { items: [] }));
    const app = open(fake.backend);
    await app.showing('● live');
    await app.press('o');
    await app.showing('Switch organization');
    await app.press(KEY.down, KEY.enter);
    await app.frameUntil((frame) => frame.includes('Beta Labs') && !frame.includes('Switch organization'));
    await until(() => fake.streams.length === 2, 'the second stream');
    expect(fake.streams.map((stream) => stream.organizationId)).toEqual(['org_A', 'org_B']);
    expect(fake.streams[0]!.signal.aborted).toBe(true);
  });

  it('moves between tabs with number keys and Tab', async () => {
    const app = open(idle().backend);
    await app.showing('● live');
    await app.press(tabKey('Products'));
    await app.showing('No products yet');
    await app.press(KEY.tab);
    await app.showing('No discounts yet');
    await app.press(tabKey('Meters'));
    await app.showing('No meters yet');
    await app.press(tabKey('Events'));
    await app.showing('Waiting for events');
    await app.press(tabKey('Dashboard'));
    await app.showing('Today');
  });
});

describe('the Events tab', () => {
  it('lists arriving events newest on top with counters per type', async () => {
    const fake = idle();
    const app = open(fake.backend);
    await app.showing('● live');
    fake.emit(anEvent('order.created'));
    fake.emit(anEvent('order.paid'));
    fake.emit(anEvent('order.paid'));
    const frame = await app.showing('3 events');
    expect(frame).toContain('order.paid 2');
    expect(frame).toContain('order.created 1');
    const rows = frame.split('\n').filter((line) => /order\.(paid|created)\s+evt_/.test(line));
    expect(rows.map((line) => line.match(/order\.\w+/)![0])).toEqual(['order.paid', 'order.paid', 'order.created']);
  });

  it('pauses on p (counting what arrives meanwhile) and follows again on p', async () => {
    const fake = idle();
    const app = open(fake.backend);
    await app.showing('● live');
    fake.emit(anEvent('checkout.created'));
    await app.showing('checkout.created');
    await app.press('p');
    await app.showing('paused');
    fake.emit(anEvent('subscription.created'));
    const paused = await app.showing('(1 new)');
    expect(paused).not.toMatch(/subscription\.created\s+evt_/);
    await app.press('p');
    await app.frameUntil((frame) => /subscription\.created\s+evt_/.test(frame) && frame.includes('● following'));
  });

  it('filters by type or text with /, and clears the filter with c', async () => {
    const fake = idle();
    const app = open(fake.backend);
    await app.showing('● live');
    fake.emit(anEvent('order.paid', { customer: 'ada@example.com' }));
    fake.emit(anEvent('refund.created', { customer: 'bob@example.com' }));
    await app.showing('2 events');
    await app.press('/');
    await app.showing('filter (type or text)');
    await app.press('r', 'e', 'f');
    await app.frameUntil((frame) => /refund\.created\s+evt_/.test(frame) && !/order\.paid\s+evt_/.test(frame));
    await app.press(KEY.enter);
    await app.showing('filter “ref” (1)');
    await app.press('c', '/');
    await app.showing('filter (type or text)');
    await app.press('a', 'd', 'a', KEY.enter);
    const byText = await app.showing('filter “ada” (1)');
    expect(byText).toMatch(/order\.paid\s+evt_/);
    expect(byText).not.toMatch(/refund\.created\s+evt_/);
    await app.press('c');
    await app.frameUntil((frame) => /refund\.created\s+evt_/.test(frame) && /order\.paid\s+evt_/.test(frame));
  });

  it('inspects the selected event’s JSON on Enter, scrolls it, and goes back on Esc', async () => {
    const fake = idle();
    const app = open(fake.backend);
    await app.showing('● live');
    const lines = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field_${String(i).padStart(2, '0')}`, i]));
    fake.emit(anEvent('customer.updated', lines));
    await app.showing('customer.updated');
    await app.press(KEY.enter);
    const json = await app.showing('"field_00": 0');
    expect(json).toContain('"type": "customer.updated"');
    expect(json).not.toContain('"field_39"');
    await app.press('G');
    await app.showing('"field_39": 39');
    await app.press(KEY.escape);
    await app.showing('1 events');
  });

  it('keeps at most 1,000 events and draws a burst of 5,000 in a few frames', async () => {
    const fake = idle();
    const app = open(fake.backend);
    await app.showing('● live');
    const before = app.frames.length;
    for (let i = 0; i < 5000; i += 1) fake.emit(anEvent(i % 2 ? 'order.paid' : 'order.created'));
    await app.showing('5000 events');
    expect(app.frames.length - before).toBeLessThan(50);
    await app.press('/');
    await app.showing('filter (type or text)');
    await app.press('o', 'r', 'd', 'e', 'r', KEY.enter);
    await app.showing('filter “order” (1000)');
  });
});
