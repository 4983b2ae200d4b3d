import { tabKey } from '../App.js';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeBackend, KEY, renderApp, until, type Sent } from '../testing.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());
const type = (text: string) => [...text];
const writes = (sent: Sent[]) => sent.filter((request) => request.method !== 'GET');

function meters() {
  const list: Record<string, unknown>[] = [
    { id: 'm_1', name: 'Tokens', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'completion' }] }, aggregation: { func: 'sum', property: 'tokens' }, archived_at: null },
  ];
  const fake = fakeBackend(({ method, path, body }) => {
    if (method === 'GET' && path.startsWith('/v1/meters/?')) return { items: list };
    if (method === 'POST' && path === '/v1/meters/') {
      list.unshift({ id: 'm_2', archived_at: null, ...(body as object) });
      return list[0];
    }
    if (method === 'GET' && path.startsWith('/v1/meters/m_1/quantities')) {
      const interval = new URL(path, 'http://x').searchParams.get('interval');
      return interval === 'hour'
        ? { quantities: [{ timestamp: '2026-11-23T01:00:00Z', quantity: 5 }, { timestamp: '2026-11-23T02:00:00Z', quantity: 0 }], total: 5 }
        : { quantities: [{ timestamp: '2026-11-21T00:00:00Z', quantity: 1200 }, { timestamp: '2026-11-22T00:00:00Z', quantity: 300 }, { timestamp: '2026-11-23T00:00:00Z', quantity: 0.5 }], total: 1500.5 };
    }
    return { items: [] };
  });
  return fake;
}

describe('the Meters tab', () => {
  it('lists meters with their filter and aggregation, and checks the new-meter form before anything is sent', async () => {
    const fake = meters();
    const app = renderApp(fake.backend);
    cleanup = app.unmount;
    await app.press(tabKey('Meters'));
    const list = await app.showing('Tokens');
    expect(list).toMatch(/Tokens\s+name eq "completion"\s+sum\(tokens\)\s+—/);
    expect(fake.sent.at(-1)!.path).toBe('/v1/meters/?organization_id=org_A&limit=100&sorting=-created_at');
    await app.press('n');
    await app.showing('New meter');
    await app.press(...type('Big calls'), KEY.down, KEY.right, KEY.down, ...type('tokens'), KEY.down, KEY.right, KEY.down, KEY.enter);
    await app.showing('Clause “tokens”: expected PROPERTY OP VALUE');
    await app.press(KEY.up, KEY.up, ...type('>10, model~gpt'), KEY.down, KEY.down, KEY.enter);
    await app.showing('sum needs a property');
    await app.press(...type('tokens'), KEY.enter);
    const confirm = await app.showing('Create meter “Big calls”');
    expect(confirm).toContain('Counts: tokens gt 10 or model like "gpt"');
    expect(confirm).toContain('Aggregation: sum(tokens)');
    await app.press('y', 'y');
    await app.showing('✓ Created meter “Big calls”.');
    expect(writes(fake.sent)).toEqual([
      {
        method: 'POST',
        path: '/v1/meters/',
        body: {
          name: 'Big calls',
          filter: { conjunction: 'or', clauses: [{ property: 'tokens', operator: 'gt', value: 10 }, { property: 'model', operator: 'like', value: 'gpt' }] },
          aggregation: { func: 'sum', property: 'tokens' },
          organization_id: 'org_A',
        },
      },
    ]);
  });

  it('charts a meter’s quantities as bars over the last 30 days by day, and asks again for another window or interval', async () => {
    const fake = meters();
    const app = renderApp(fake.backend);
    cleanup = app.unmount;
    await app.press(tabKey('Meters'));
    await app.showing('Tokens');
    await app.press('c');
    const chart = await app.showing('total 1,500.5');
    expect(chart).toContain('Tokens sum(tokens) · last 30 days by day');
    const bars = chart.split('\n').filter((line) => /^2026-11-2\d/.test(line));
    expect(bars).toHaveLength(3);
    // Scaled to the largest: 1,200 fills the width, 300 a quarter of it, 0.5 still shows.
    const cells = (line: string) => (line.match(/█/g) ?? []).length;
    expect(cells(bars[1]!) / cells(bars[0]!)).toBeCloseTo(0.25, 1);
    expect(bars[2]).toMatch(/2026-11-23\s+▏\s+0\.5$/);
    expect(chart).toMatch(/Total\s+1,500\.5/);
    const query = (request: Sent) => new URL(request.path, 'http://x').searchParams;
    const first = query(fake.sent.at(-1)!);
    expect(first.get('interval')).toBe('day');
    expect(Date.parse(first.get('end_timestamp')!) - Date.parse(first.get('start_timestamp')!)).toBe(30 * 86_400_000);

    await app.press('w', 'w', 'i');
    const hourly = await app.showing('last 24 hours by hour · total 5');
    expect(hourly).toMatch(/2026-11-23 01:00\s+█+\s+5/);
    const last = query(fake.sent.at(-1)!);
    expect(last.get('interval')).toBe('hour');
    expect(Date.parse(last.get('end_timestamp')!) - Date.parse(last.get('start_timestamp')!)).toBe(24 * 3_600_000);
    await app.press(KEY.escape);
    await app.showing('1 meters');
    expect(writes(fake.sent)).toEqual([]);
  });

  it('archives a meter after a confirmation, once, and shows the server’s refusal', async () => {
    const fake = meters();
    let refusals = 1;
    const backend = {
      ...fake.backend,
      async request<T>(method: 'GET' | 'PATCH', path: string, body?: unknown): Promise<T> {
        if (method === 'PATCH' && refusals-- > 0) {
          fake.sent.push({ method, path, body });
          throw new Error('http://127.0.0.1:4010 rejected the request:\n  is_archived: Meter is used by an active price: archive the price (update its product) first.');
        }
        return fake.backend.request<T>(method, path, body);
      },
    };
    const app = renderApp(backend);
    cleanup = app.unmount;
    await app.press(tabKey('Meters'));
    await app.showing('Tokens');
    await app.press('a');
    await app.showing('Archive meter “Tokens”?');
    await app.press('y', 'y');
    await app.showing('Meter is used by an active price');
    await until(() => writes(fake.sent).length === 1, 'the refused archive');
    await app.press('a', 'y');
    await until(() => writes(fake.sent).length === 2, 'the archive');
    expect(writes(fake.sent)[1]).toEqual({ method: 'PATCH', path: '/v1/meters/m_1', body: { is_archived: true } });
  });
});
