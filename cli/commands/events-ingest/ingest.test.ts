import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { polarSdk } from '../../../daemon/testing/v1.js';
import { seller, tillJson, tillOnTerminal, tillWithInput, type Seller } from '../../testing/catalog.js';
import { execa } from 'execa';
import { TILL_BIN, tempConfigDir, till, tillEnv } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;
let customerId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Usage Shop');
  customerId = (await polarSdk(daemon.url, acme.user.token).customers.create({ organizationId: acme.organizationId, email: 'heavy@example.com', externalId: 'heavy-user' })).id;
});
afterAll(() => daemon?.close());

function eventsFile(name: string, text: string): string {
  const path = join(tempConfigDir(), name);
  writeFileSync(path, text);
  return path;
}

/**
 * `till` on a pseudo-terminal, as tillOnTerminal runs it, with room for 100,000 events on a loaded machine (its
 * 30 s limit is for interactive commands).
 */
function onTerminal(args: string[], env: Record<string, string>) {
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols 160 2>/dev/null; ${process.execPath} ${TILL_BIN} ${args.map(quote).join(' ')}`;
  return execa('script', ['-qec', command, '/dev/null'], { env: tillEnv({ TERM: 'xterm', ...env }), extendEnv: false, reject: false, timeout: 240_000 });
}

const at = (i: number) => new Date(Date.UTC(2026, 0, 1 + (i % 28), i % 24)).toISOString();

describe('till events ingest', () => {
  it('ingests a file of 100,000 events with a progress bar and the rate on a terminal', async () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => JSON.stringify({ name: 'api_call', external_customer_id: 'heavy-user', external_id: `bulk-${i}`, timestamp: at(i), metadata: { tokens: i % 10 } }));
    const path = eventsFile('bulk.ndjson', `${lines.join('\n')}\n`);
    const result = await onTerminal(['events', 'ingest', path], acme.env);
    expect(result.exitCode, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/Ingesting {2}█+ {2}100% {2}100,000 events {2}[\d,]+ events\/s/);
    expect(result.stdout).toContain('Ingested 100,000 events: 100,000 inserted, 0 duplicates');
    expect(Number((await daemon.db('events').where({ organization_id: acme.organizationId, name: 'api_call' }).count({ n: '*' }))[0]!.n)).toBe(100_000);

    // Part of the file again, with one new event: the rest are duplicates by their external_id.
    const again = eventsFile('again.ndjson', [...lines.slice(0, 2000), JSON.stringify({ name: 'api_call', external_customer_id: 'heavy-user', external_id: 'bulk-new' })].join('\n'));
    expect(await tillJson(['events', 'ingest', again], acme.env)).toEqual({ inserted: 1, duplicates: 2000 });
  }, 300_000);

  it('reads a JSON array, and NDJSON from stdin', async () => {
    const array = eventsFile('array.json', JSON.stringify([{ name: 'login', customer_id: customerId }, { name: 'login', customer_id: customerId, metadata: { ok: true } }], null, 2));
    expect(await tillJson(['events', 'ingest', array], acme.env)).toEqual({ inserted: 2, duplicates: 0 });
    const piped = await tillWithInput(['events', 'ingest', '-', '--json'], acme.env, `${JSON.stringify({ name: 'logout', customer_id: customerId })}\n\n${JSON.stringify({ name: 'logout', customer_id: customerId })}\n`);
    expect(piped.exitCode).toBe(0);
    expect(JSON.parse(piped.stdout)).toEqual({ inserted: 2, duplicates: 0 });
  });

  it('names the line of an event the server refuses, and exits 5', async () => {
    const lines = [
      ...Array.from({ length: 1500 }, (_, i) => JSON.stringify({ name: 'ok', customer_id: customerId, external_id: `refusal-${i}` })),
      JSON.stringify({ name: 'late', customer_id: customerId, timestamp: '2999-01-01T00:00:00Z' }),
    ];
    const path = eventsFile('refused.ndjson', lines.join('\n'));
    const result = await till(['events', 'ingest', path, '--batch-size', '1000'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('Line 1501 was refused: timestamp: Timestamp must be in the past.');
    const json = await till(['events', 'ingest', eventsFile('not-json.ndjson', '{"name":"a","customer_id":"x"}\nnot json\n'), '--json'], acme.env);
    expect(json.exitCode).toBe(5);
    expect(JSON.parse(json.stderr).error.message).toMatch(/^Line 2 is not JSON/);
  });
});

describe('till meters and events', () => {
  it('creates a meter from flags, lists events and names, and charts its quantities on a terminal', async () => {
    const meter = await tillJson(['meters', 'create', '--name', 'Tokens', '--where', 'name=api_call', '--aggregate', 'sum:tokens'], acme.env);
    expect(meter).toMatchObject({ name: 'Tokens', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api_call' }] }, aggregation: { func: 'sum', property: 'tokens' } });
    expect((await tillJson(['meters', 'get', meter.id], acme.env)).id).toBe(meter.id);
    expect((await tillJson(['meters', 'list'], acme.env)).items.map((m: { id: string }) => m.id)).toContain(meter.id);
    expect(await tillJson(['meters', 'update', meter.id, '--name', 'LLM tokens'], acme.env)).toMatchObject({ name: 'LLM tokens' });

    const chart = await tillOnTerminal(['meters', 'quantities', meter.id, '--start', '2026-01-01', '--end', '2026-01-03T23:59:59Z', '--interval', 'day'], acme.env);
    expect(chart.exitCode, chart.stdout).toBe(0);
    // Day 1 gets events i ≡ 0 (mod 28); their tokens are i mod 10.
    const quantities = await tillJson(['meters', 'quantities', meter.id, '--start', '2026-01-01', '--end', '2026-01-03T23:59:59Z'], acme.env);
    expect(quantities.quantities).toHaveLength(3);
    expect(quantities.total).toBeGreaterThan(0);
    const screen = chart.stdout.replace(/\x1b\[[0-9;]*m/g, '');
    for (const bucket of quantities.quantities) expect(screen).toMatch(new RegExp(`${bucket.timestamp.slice(0, 10)} {2}█+ *${bucket.quantity.toLocaleString('en-US')}`));
    expect(screen).toMatch(new RegExp(`Total .*${quantities.total.toLocaleString('en-US')}`));
    const table = await till(['meters', 'quantities', meter.id, '--start', '2026-01-01', '--end', '2026-01-01T23:59:59Z'], acme.env);
    expect(table.stdout.trim().split('\n')).toEqual([`2026-01-01T00:00:00.000Z\t${quantities.quantities[0].quantity}`, `total\t${quantities.quantities[0].quantity}`]);

    const names = await tillJson(['events', 'names'], acme.env);
    expect(names.items).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'api_call', occurrences: 100_001 })]));
    const listed = await tillJson(['events', 'list', '--name', 'login', '--customer', customerId], acme.env);
    expect(listed.items).toHaveLength(2);
    expect((await tillJson(['events', 'get', listed.items[0].id], acme.env)).name).toBe('login');

    expect(await tillJson(['meters', 'archive', meter.id, '--yes'], acme.env)).toMatchObject({ id: meter.id, archived_at: expect.any(String) });
  }, 60_000);

  it('lists customer meters', async () => {
    const meter = await tillJson(['meters', 'create', '--name', 'Logins', '--where', 'name=login', '--aggregate', 'count'], acme.env);
    await tillJson(['events', 'ingest', eventsFile('more.ndjson', JSON.stringify({ name: 'login', customer_id: customerId }))], acme.env);
    // Customers' meters are recomputed 30 s after an ingest: the organization's test clock is moved past that (its
    // due jobs run as it moves), rather than the test waiting for real time and hoping it was long enough.
    expect((await till(['clock', 'sandbox', 'on'], acme.env)).exitCode).toBe(0);
    expect((await till(['clock', 'advance', '+1h'], acme.env)).exitCode).toBe(0);
    let items: { meter_id: string; consumed_units: number }[] = [];
    const deadline = Date.now() + 30_000;
    while (items.length === 0 && Date.now() < deadline) {
      items = (await tillJson(['customer-meters', 'list', '--meter', meter.id], acme.env)).items;
      if (items.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(items).toMatchObject([{ meter_id: meter.id, consumed_units: 3 }]);
  }, 90_000);
});
