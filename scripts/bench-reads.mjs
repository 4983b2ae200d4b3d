// The reads benchmark (issue 21): `GET /v1/products/{id}` and `GET /v1/customers/{id}/state` with an organization
// access token, on a real built tilld (bin/tilld, dist/) over SQLite and over PostgreSQL, each measured right after a
// bare Express 5 JSON route (the baseline, in its own process, answering the same JSON document) with the same load:
// autocannon, 100 connections. The ratio is tilld's requests/s over the baseline's of the same pair.
// `scripts/bench.mjs` calls benchReads() and puts its section in docs/performance.md; `node scripts/bench-reads.mjs
// [--quick] [--duration=S] [--only=sqlite|postgres] [--profile=DIR]` runs it alone and prints the section. With
// --profile, tilld runs under `node --cpu-prof` and the section ends with where its CPU time went.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import knex from 'knex';

const CONNECTIONS = 100;
const wait = (t) => new Promise((resolve) => setTimeout(resolve, t));
const load = () => loadavg().map((x) => x.toFixed(2)).join(', ');
const int = (x) => Math.round(x).toLocaleString('en-US');

/** A port free right now (the daemon and the baseline are given one, so their stdout can go to /dev/null). */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitFor(url, child) {
  let exited = false;
  child.once('exit', () => (exited = true));
  for (let i = 0; i < 600 && !exited; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await wait(100);
  }
  child.kill('SIGKILL');
  throw new Error(`${url} did not answer`);
}

export const stopChild = async (child) => {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
};

/**
 * tilld as it ships: default logging (info, one JSON line a request, to /dev/null here), default rate limiting,
 * background work (jobs, webhook worker) running.
 */
export async function startTilld(root, env, profileDir) {
  const dataDir = mkdtempSync(join(tmpdir(), 'till-bench-reads-'));
  const port = await freePort();
  const args = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...args, join(root, 'bin/tilld')], {
    env: { ...process.env, TILL_PORT: String(port), TILL_HOST: '127.0.0.1', TILL_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/readyz`, child);
  return { child, url, dataDir };
}

/** The baseline: Express 5 alone, one GET route answering a fixed JSON document. */
async function startBare(root, document) {
  const port = await freePort();
  const script = `
    const express = require('express');
    const document = JSON.parse(process.env.BENCH_DOCUMENT);
    const app = express();
    app.get('/document', (_req, res) => { res.json(document); });
    app.listen(${port}, '127.0.0.1');
  `;
  const child = spawn(process.execPath, ['-e', script], { cwd: root, env: { ...process.env, BENCH_DOCUMENT: JSON.stringify(document) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}/document`;
  await waitFor(url, child);
  return { child, url };
}

async function json(url, init, token) {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', origin: new URL(url).origin, ...(token ? { authorization: `Bearer ${token}` } : {}), ...init?.headers } });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return { body: text ? JSON.parse(text) : null, headers: res.headers };
}

/**
 * A seller with one organization, an access token reading products and customers, a product with a price and a
 * benefit, and a customer subscribed to a free plan (so the state has a subscription and a granted benefit to show).
 */
export async function seed(url) {
  const post = (path, body, token) => json(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) }, token).then((r) => r.body);
  const signUp = await json(`${url}/api/auth/sign-up/email`, { method: 'POST', body: JSON.stringify({ name: 'Bench', email: `bench-${randomUUID()}@example.com`, password: 'bench-password-123' }) });
  const session = signUp.headers.get('set-auth-token');
  const organizationId = (await post('/api/auth/organization/create', { name: 'Bench', slug: `bench-${randomUUID().slice(0, 8)}` }, session)).id;
  const benefit = await post('/v1/benefits/', { organization_id: organizationId, type: 'custom', description: 'Priority support', properties: { note: 'Write to support@bench.example' } }, session);
  const product = await post('/v1/products/', { organization_id: organizationId, name: 'Pro', description: 'The plan most teams take', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }], metadata: { tier: 'pro' } }, session);
  await post(`/v1/products/${product.id}/benefits`, { benefits: [benefit.id] }, session);
  const plan = await post('/v1/products/', { organization_id: organizationId, name: 'Free', recurring_interval: 'month', prices: [{ amount_type: 'free' }] }, session);
  await post(`/v1/products/${plan.id}/benefits`, { benefits: [benefit.id] }, session);
  const customer = await post('/v1/customers/', { organization_id: organizationId, email: 'buyer@bench.example', name: 'Buyer', external_id: 'bench-1', metadata: { team: 'a' } }, session);
  await post('/v1/subscriptions/', { product_id: plan.id, customer_id: customer.id }, session);
  const token = (await post('/v1/organization-access-tokens', { organization_id: organizationId, comment: 'bench', scopes: ['products:read', 'customers:read'] }, session)).token;
  return { token, productId: product.id, customerId: customer.id };
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux); undefined elsewhere. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100 on Linux)
  } catch {
    return undefined;
  }
}

/**
 * autocannon at CONNECTIONS connections for `seconds`, after a short warm-up; every answer must be a 200. Also the
 * server's CPU time per request, which other work on the machine disturbs much less than requests/s.
 */
async function hammer(url, token, seconds, pid) {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  await autocannon({ url, connections: CONNECTIONS, duration: Math.min(3, seconds), headers });
  const loadAt = load();
  const cpuBefore = cpuMs(pid);
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers });
  const cpuAfter = cpuMs(pid);
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`);
  const cpuPerRequest = cpuBefore === undefined ? undefined : ((cpuAfter - cpuBefore) * 1000) / result.requests.total; // µs
  return { rps: result.requests.average, p99: result.latency.p99, total: result.requests.total, load: loadAt, cpuPerRequest };
}

async function runOn(root, dialect, pgUrl, seconds, profileDir) {
  let env = {};
  let admin;
  let database;
  if (dialect === 'postgres') {
    admin = knex({ client: 'pg', connection: pgUrl, pool: { min: 0, max: 1 } });
    try {
      await admin.raw('select 1');
    } catch {
      await admin.destroy();
      return undefined;
    }
    database = `till_bench_reads_${randomUUID().slice(0, 8)}`;
    await admin.raw(`create database ${database}`);
    const u = new URL(pgUrl);
    u.pathname = `/${database}`;
    env = { TILL_DATABASE_URL: u.toString() };
  }
  const daemon = await startTilld(root, env, profileDir);
  let bare;
  try {
    const seeded = await seed(daemon.url);
    const rows = [];
    for (const [label, path] of [
      ['`GET /v1/products/{id}`', `/v1/products/${seeded.productId}`],
      ['`GET /v1/customers/{id}/state`', `/v1/customers/${seeded.customerId}/state`],
    ]) {
      const url = `${daemon.url}${path}`;
      // The baseline answers the very document tilld does, so both pay the same JSON.stringify and bytes.
      const document = (await json(url, {}, seeded.token)).body;
      bare = await startBare(root, document);
      const baseline = await hammer(bare.url, undefined, seconds, bare.child.pid);
      await stopChild(bare.child);
      bare = undefined;
      const till = await hammer(url, seeded.token, seconds, daemon.child.pid);
      rows.push({ label, baseline, till });
    }
    return rows;
  } finally {
    if (bare) await stopChild(bare.child);
    await stopChild(daemon.child);
    rmSync(daemon.dataDir, { recursive: true, force: true });
    if (admin) {
      await admin.raw(`drop database if exists ${database} with (force)`);
      await admin.destroy();
    }
  }
}

/**
 * Where the CPU time of a .cpuprofile went, by self time: grouped into the parts of a request the issue names
 * (a function belongs to the first group whose pattern its file or name matches), and the top functions.
 */
export function summarizeProfile(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const dt = new Map();
  for (let i = 0; i < profile.samples.length; i++) dt.set(profile.samples[i], (dt.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const groups = [
    ['idle (waiting for I/O)', (f, n) => n === '(idle)'],
    ['garbage collection', (f, n) => n === '(garbage collector)'],
    ['token authentication (hash, lookup)', (f) => /access-tokens\/|principal\.js/.test(f)],
    ['Better Auth', (f) => /better-auth|better-call|@better-auth/.test(f)],
    ['pino, pino-http (logging)', (f) => /pino|request-context|sonic-boom|fast-redact|thread-stream/.test(f)],
    ['helmet', (f) => /helmet/.test(f)],
    ['zod (input parsing)', (f) => /\/zod\//.test(f)],
    ['knex (query building)', (f) => /\/knex\//.test(f)],
    ['better-sqlite3 (queries)', (f, n) => /better-sqlite3/.test(f) || /^(all|get|run|prepare|iterate)$/.test(n) && !f],
    ['pg (driver, protocol)', (f) => /\/pg\/|pg-protocol|pg-pool|pg-types|postgres-/.test(f)],
    ['Till services, repositories, serializers', (f) => /dist\/core\//.test(f)],
    ['Till HTTP layer (routes, mountRoutes)', (f) => /dist\/daemon\//.test(f)],
    ['Express, router, body parsers', (f) => /express|router|body-parser|finalhandler|send\/|qs\/|path-to-regexp|raw-body|type-is|content-type|accepts|negotiator|mime/.test(f)],
    ['node: HTTP, streams, sockets', (f, n) => /^node:/.test(f) || /^(writev|writeBuffer|writeUtf8String|onStreamRead|processTicksAndRejections)$/.test(n)],
    ['(program) and native', () => true],
  ];
  const byGroup = new Map(groups.map(([g]) => [g, 0]));
  const byFunction = new Map();
  let total = 0;
  for (const node of profile.nodes) {
    const self = dt.get(node.id) ?? 0;
    if (!self) continue;
    total += self;
    const f = node.callFrame.url ?? '';
    const n = node.callFrame.functionName || '(anonymous)';
    const group = groups.find(([, test]) => test(f, n))[0];
    byGroup.set(group, byGroup.get(group) + self);
    const key = `${n} ${f.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${node.callFrame.lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + self);
  }
  const idle = byGroup.get('idle (waiting for I/O)');
  const busy = total - idle;
  const pct = (x, of) => `${((100 * x) / of).toFixed(1)} %`;
  const groupRows = [...byGroup].filter(([, t]) => t > 0).sort((a, b) => b[1] - a[1]).map(([g, t]) => `| ${g} | ${(t / 1000).toFixed(0)} ms | ${g.startsWith('idle') ? '' : pct(t, busy)} |`);
  const top = [...byFunction].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, t]) => `| \`${k}\` | ${pct(t, busy)} |`);
  return `| Part | Self time | Share of busy time |\n|---|---|---|\n${groupRows.join('\n')}\n\nTop functions by self time:\n\n| Function | Share of busy time |\n|---|---|\n${top.join('\n')}\n`;
}

export async function benchReads({ root, quick, seconds = quick ? 5 : 30, only, profileDir }) {
  const pgUrl = process.env.TILL_BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const startLoad = load();
  const rows = [];
  const profiles = [];
  const cpu = (r) => (r.cpuPerRequest === undefined ? '?' : `${Math.round(r.cpuPerRequest)} µs`);
  for (const dialect of ['sqlite', 'postgres']) {
    if (only && only !== dialect) continue;
    const dir = profileDir ? mkdtempSync(join(profileDir, `${dialect}-`)) : undefined;
    const measured = await runOn(root, dialect, pgUrl, seconds, dir);
    if (!measured) {
      rows.push(`| ${dialect} | skipped: ${pgUrl} not reachable | | | | | | | |`);
      continue;
    }
    const floor = dialect === 'sqlite' ? 0.5 : 0.35;
    for (const { label, baseline, till } of measured) {
      const ratio = till.rps / baseline.rps;
      const met = ratio >= floor && (dialect !== 'sqlite' || till.p99 < 25);
      rows.push(
        `| ${dialect} | ${label} | ${int(till.rps)} req/s, p99 ${till.p99} ms | ${int(baseline.rps)} req/s, p99 ${baseline.p99} ms | **${ratio.toFixed(2)}×** | ${cpu(till)} / ${cpu(baseline)} | ${till.load} | ≥ ${floor}×${dialect === 'sqlite' ? ', p99 < 25 ms' : ''} | ${met ? 'met' : '**missed**'} |`,
      );
    }
    if (dir) for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) profiles.push(`#### ${dialect}: ${file}\n\n${summarizeProfile(join(dir, file))}`);
  }
  return `## Reads (issue 21): measured

A built tilld (\`bin/tilld\`, default logging and rate limiting, background work running) on a temporary SQLite file and
on a fresh PostgreSQL database, read with an organization access token (products:read, customers:read) by
autocannon at ${CONNECTIONS} connections for ${seconds} s after a warm-up. The baseline, measured just before each tilld
figure: a bare Express 5 app in its own process whose one GET route answers the same JSON document. The product has a
price, a benefit and metadata; the customer has one active subscription and one granted benefit. Load average
(1, 5, 15 min) when each tilld figure started is in its row; at the start of the section: ${startLoad}. "Server CPU a
request" is the server process's CPU time (user + system, from /proc) over the run divided by the requests it
answered: other work on the machine moves it much less than it moves requests/s. On PostgreSQL the database
server's own CPU is not in it.

| Database | Read | tilld | Bare Express | Ratio | Server CPU a request, tilld / bare | Load | Target | |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
${profiles.length ? `\n### CPU profile of tilld during the run (\`--profile\`)\n\n${profiles.join('\n')}` : ''}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = new URL('..', import.meta.url).pathname;
  const arg = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const quick = process.argv.includes('--quick');
  const duration = arg('duration');
  console.log(await benchReads({ root, quick, seconds: duration ? Number(duration) : quick ? 5 : 30, only: arg('only'), profileDir: arg('profile') }));
}
