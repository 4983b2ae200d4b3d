import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { jsonFile, seller, tillJson, tillOnTerminal, tillWithInput, type Seller } from '../testing/catalog.js';
import { tempConfigDir, till } from '../testing/till.js';

/** The JSON document among what a terminal showed (questions and answers before it). */
const lastJson = (screen: string) => {
  const line = screen.split(/\r?\n/).reverse().find((candidate) => candidate.includes('{"'))!;
  return JSON.parse(line.slice(line.indexOf('{"')));
};

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Generic Shop');
});
afterAll(() => daemon?.close());

describe('request bodies', () => {
  it('takes the body from --data @file, with flags overriding its fields', async () => {
    const path = jsonFile({ name: 'From file', prices: [{ amount_type: 'fixed', price_amount: 700 }], metadata: { source: 'file' } });
    const created = await tillJson(['products', 'create', '--data', `@${path}`, '--name', 'From flag'], acme.env);
    expect(created).toMatchObject({ name: 'From flag', metadata: { source: 'file' }, prices: [expect.objectContaining({ price_amount: 700 })] });
  });

  it('takes the body from stdin with --data -', async () => {
    const result = await tillWithInput(['customers', 'create', '--data', '-', '--json'], acme.env, JSON.stringify({ email: 'stdin@example.com', name: 'Piped' }));
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ email: 'stdin@example.com', name: 'Piped' });
  });

  it('takes inline JSON with --data, and an update body the same way', async () => {
    const created = await tillJson(['customers', 'create', '--data', '{"email":"inline@example.com"}'], acme.env);
    const updated = await tillJson(['customers', 'update', created.id, '--data', '{"name":"Inline","metadata":{"a":"b"}}'], acme.env);
    expect(updated).toMatchObject({ name: 'Inline', metadata: { a: 'b' } });
  });

  it('exits 5 when --data is not a readable JSON object, naming the flag', async () => {
    const missing = await till(['customers', 'create', '--data', '@/nonexistent.json', '--json'], acme.env);
    expect(missing.exitCode).toBe(5);
    expect(JSON.parse(missing.stderr).error).toEqual({ code: 'INVALID_FLAG', message: '--data: cannot read /nonexistent.json (no such file).' });
    const array = await till(['customers', 'create', '--data', '[1,2]'], acme.env);
    expect(array.exitCode).toBe(5);
    expect(array.stderr).toContain('must hold a JSON object');
    const broken = await tillWithInput(['customers', 'create', '--data', '-'], acme.env, '{"email":');
    expect(broken.exitCode).toBe(5);
    expect(broken.stderr).toContain('--data: stdin is not JSON');
  });

  it('exits 2 when an update is given nothing to change', async () => {
    const created = await tillJson(['customers', 'create', '--email', 'unchanged@example.com'], acme.env);
    const result = await till(['customers', 'update', created.id], acme.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('Nothing to change');
  });

  it('exits 2 naming the argument when the id is missing off a terminal', async () => {
    const result = await till(['customers', 'get', '--json'], acme.env);
    expect(result.exitCode).toBe(2);
    expect(JSON.parse(result.stderr).error).toEqual({ code: 'MISSING_ARGUMENT', message: 'Missing the <id> argument (needed to get a customer).' });
  });
});

describe('lists', () => {
  let other: Seller;
  beforeAll(async () => {
    other = await seller(daemon, 'Many Customers');
    for (let i = 0; i < 12; i++) await tillJson(['customers', 'create', '--email', `c${String(i).padStart(2, '0')}@example.com`], other.env);
  });

  it('follows every page with --all', async () => {
    const all = await tillJson(['customers', 'list', '--all', '--limit', '5', '--sort', 'email'], other.env);
    expect(all.items.map((customer: { email: string }) => customer.email)).toEqual(Array.from({ length: 12 }, (_, i) => `c${String(i).padStart(2, '0')}@example.com`));
    expect(all.pagination).toEqual({ total_count: 12, max_page: 3 });
  });

  it('sorts with --sort, descending with a leading -', async () => {
    const last = await tillJson(['customers', 'list', '--limit', '1', '--sort', '-email'], other.env);
    expect(last.items[0].email).toBe('c11@example.com');
  });

  it('shows one page with --limit and --page, and says on stderr how to get the rest', async () => {
    const second = await till(['customers', 'list', '--limit', '5', '--page', '2', '--sort', 'email'], other.env);
    expect(second.exitCode).toBe(0);
    expect(second.stdout.split('\n').map((line) => line.split('\t')[1])).toEqual(['c05@example.com', 'c06@example.com', 'c07@example.com', 'c08@example.com', 'c09@example.com']);
    expect(second.stderr).toBe('Page 2 of 3, 12 customers in all: --page 3 for the next, --all for every one.');
  });

  it('says so on stderr, and prints nothing on stdout, when a list is empty', async () => {
    const result = await till(['discounts', 'list'], other.env);
    expect(result).toMatchObject({ exitCode: 0, stdout: '', stderr: 'No discounts.' });
  });

  it('draws an aligned table with a header on a terminal', async () => {
    const result = await tillOnTerminal(['customers', 'list', '--limit', '3', '--sort', 'email'], { ...other.env, NO_COLOR: '1' });
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.split(/\r?\n/).filter(Boolean);
    expect(lines[0]).toMatch(/^ID {36}EMAIL {12}NAME {2}EXTERNAL ID {2}CREATED$/);
    expect(lines[1]).toMatch(/^[0-9a-f-]{36} {2}c00@example\.com {2}— {5}— {12}\d{4}-\d\d-\d\d \d\d:\d\d$/);
    // The page note is on stderr, which the terminal shows after the rows.
    expect(lines).toHaveLength(5);
    expect(lines[4]).toContain('Page 1 of 4, 12 customers in all');
  });

  it('writes the table header in bold when colour is on', async () => {
    const result = await tillOnTerminal(['customers', 'list', '--limit', '1'], other.env);
    expect(result.stdout).toContain('\x1b[1mID');
  });

  it('exits 5 on a --limit that is not a whole number from 1', async () => {
    const result = await till(['customers', 'list', '--limit', '0'], other.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('--limit "0"');
  });
});

describe('on a terminal', () => {
  it('asks for the required fields the command line left out', async () => {
    const result = await tillOnTerminal(['products', 'create', '--json'], acme.env, [
      ['Product name', 'Asked for\r'],
      ['Price', '2500:usd:year\r'],
    ]);
    expect(result.exitCode).toBe(0);
    const product = lastJson(result.stdout);
    expect(product).toMatchObject({ name: 'Asked for', recurring_interval: 'year', prices: [expect.objectContaining({ price_amount: 2500 })] });
  });

  it('offers the choices of a closed field as a list', async () => {
    const result = await tillOnTerminal(['custom-fields', 'create', '--json'], acme.env, [
      ['Kind of answer', '\x1b[B\r'],
      ['Slug', 'seats\r'],
      ['Name', 'Seats\r'],
    ]);
    expect(result.exitCode).toBe(0);
    const field = lastJson(result.stdout);
    expect(field).toMatchObject({ type: 'number', slug: 'seats', name: 'Seats' });
  });

  it('asks before deleting, and deletes nothing when told no', async () => {
    const created = await tillJson(['customers', 'create', '--email', 'ask-first@example.com'], acme.env);
    const declined = await tillOnTerminal(['customers', 'delete', created.id], acme.env, [['Delete customer', 'n\r']]);
    expect(declined.exitCode).toBe(1);
    expect(declined.stdout).toContain('Nothing was deleted.');
    expect((await till(['customers', 'get', created.id], acme.env)).exitCode).toBe(0);

    const accepted = await tillOnTerminal(['customers', 'delete', created.id], acme.env, [['Delete customer', 'y\r']]);
    expect(accepted.exitCode).toBe(0);
    expect((await till(['customers', 'get', created.id], acme.env)).exitCode).toBe(4);
  });
});

describe('credentials', () => {
  it('exits 3 when not signed in, and when the server refuses the token', async () => {
    const none = await till(['products', 'list', '--server', daemon.url], { TILL_CONFIG_DIR: tempConfigDir() });
    expect(none.exitCode).toBe(3);
    expect(none.stderr).toContain('Not signed in');
    const bad = await till(['products', 'list', '--json'], { ...acme.env, TILL_TOKEN: 'till_oat_not-a-token' });
    expect(bad.exitCode).toBe(3);
  });
});
