// The webhook delivery benchmark (issue 21): how long an event committed by tilld takes to reach an endpoint, and
// how many deliveries a second tilld makes to one endpoint and across ten, on SQLite and PostgreSQL. The baseline is
// the same receiver answering POSTs sent one at a time over one kept-alive connection from this process: the most a
// strictly ordered, one-at-a-time delivery to one endpoint could do here.
// `scripts/bench.mjs` calls benchWebhooks() and puts its section in docs/performance.md; `node scripts/bench-webhooks.mjs
// [--quick]` runs it alone and prints the section.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import knex from 'knex';

const SECRET = 'bench-secret-bench-secret-bench-secret-00';
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => `${x.toFixed(1)} ms`;
const wait = (t) => new Promise((resolve) => setTimeout(resolve, t));

/** A local endpoint: answers 204 at once and records when each event arrived, per path, in arrival order. */
async function startReceiver() {
  const arrivals = new Map(); // path -> [{ id, at }]
  const seen = new Map(); // webhook-id -> first arrival time
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const at = performance.now();
      const id = String(req.headers['webhook-id']);
      if (!arrivals.has(req.url)) arrivals.set(req.url, []);
      arrivals.get(req.url).push({ id, at });
      if (!seen.has(id)) seen.set(id, at);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, arrivals, seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** The floor: POSTs sent one after another on one kept-alive connection, the way an ordered delivery must go. */
async function baselineRate(url, count) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const body = JSON.stringify({ type: 'customer.created', data: { id: randomUUID() } });
  const post = () =>
    new Promise((resolve, reject) => {
      const req = request(`${url}/baseline`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'webhook-id': randomUUID(), 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  for (let i = 0; i < 50; i++) await post();
  const started = performance.now();
  for (let i = 0; i < count; i++) await post();
  const elapsed = performance.now() - started;
  agent.destroy();
  return count / (elapsed / 1000);
}

async function startDaemon(root, env) {
  const dataDir = mkdtempSync(join(tmpdir(), 'till-bench-webhooks-'));
  const child = spawn(process.execPath, [join(root, 'bin/tilld')], {
    env: { ...process.env, TILL_PORT: '0', TILL_DATA_DIR: dataDir, TILL_LOG_LEVEL: 'info', TILL_RATE_LIMIT: 'off', TILL_SECRET: SECRET, TILL_WEBHOOKS_ALLOW_PRIVATE: '1', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The daemon logs where it listens (TILL_PORT=0 picks a free port).
  const url = await new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk) => {
      buffer += chunk;
      const found = /"url":"(http:\/\/[^"]+)"/.exec(buffer) ?? /listening on (http:\/\/\S+)/i.exec(buffer);
      if (found) {
        child.stdout.off('data', onData);
        child.stdout.resume();
        resolve(found[1]);
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.on('exit', (code) => reject(new Error(`tilld exited ${code} before listening`)));
  });
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) return { child, url, dataDir };
    } catch {}
    await wait(100);
  }
  child.kill('SIGKILL');
  throw new Error('tilld did not become ready');
}

async function json(url, init, token) {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', origin: new URL(url).origin, ...(token ? { authorization: `Bearer ${token}` } : {}), ...init?.headers } });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return { body: text ? JSON.parse(text) : null, headers: res.headers };
}

async function seed(url) {
  const signUp = await json(`${url}/api/auth/sign-up/email`, { method: 'POST', body: JSON.stringify({ name: 'Bench', email: `bench-${randomUUID()}@example.com`, password: 'bench-password-123' }) });
  const token = signUp.headers.get('set-auth-token');
  const organizationId = (await json(`${url}/api/auth/organization/create`, { method: 'POST', body: JSON.stringify({ name: 'Bench', slug: `bench-${randomUUID().slice(0, 8)}` }) }, token)).body.id;
  return { token, organizationId };
}

const endpoint = (url, seeded, target) =>
  json(`${url}/v1/webhooks/endpoints`, { method: 'POST', body: JSON.stringify({ organization_id: seeded.organizationId, url: target, format: 'raw', events: ['customer.created', 'customer.updated'] }) }, seeded.token).then((r) => r.body.id);

/**
 * Commit → delivered: customers created one at a time with a pause between (the worker is idle when each commits);
 * the time from sending the request (an upper bound on its commit) to the event's arrival.
 */
async function latency(url, seeded, receiver, count) {
  await endpoint(url, seeded, `${receiver.url}/latency`);
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const { body } = await json(`${url}/v1/customers/`, { method: 'POST', body: JSON.stringify({ organization_id: seeded.organizationId, email: `l${i}-${randomUUID().slice(0, 6)}@bench.example` }) }, seeded.token);
    // The event's webhook-id is the outbox event's id, not the customer's: find the arrival by the customer id in the body.
    for (;;) {
      const arrived = (receiver.arrivals.get('/latency') ?? []).length > i;
      if (arrived) break;
      await wait(1);
    }
    times.push(receiver.arrivals.get('/latency')[i].at - started);
    void body;
    await wait(20);
  }
  return { p50: percentile(times, 50), p90: percentile(times, 90), p99: percentile(times, 99), max: Math.max(...times) };
}

/**
 * Throughput: `count` events committed at once straight into the outbox (through Till's own recordEvent, from this
 * process), to `endpoints` endpoints; the rate is deliveries between the first and the last arrival. Checks that
 * every endpoint got every event, in commit order.
 */
async function throughput(root, url, seeded, receiver, dbConfig, endpoints, count, label) {
  const paths = [];
  for (let e = 0; e < endpoints; e++) {
    const path = `/${label}-${e}`;
    paths.push(path);
    await endpoint(url, seeded, `${receiver.url}${path}`);
  }
  const { createDatabase } = await import(join(root, 'dist/core/db/database.js'));
  const { recordEvent } = await import(join(root, 'dist/core/webhooks/outbox.js'));
  const db = createDatabase(dbConfig);
  const clock = { now: () => new Date() };
  const ids = [];
  await db.transaction(async (trx) => {
    for (let i = 0; i < count; i++) {
      const event = await recordEvent(trx, clock, { organizationId: seeded.organizationId, type: 'customer.updated', data: { id: randomUUID(), n: i } });
      ids.push(event.id);
    }
  });
  await db.destroy();
  const expected = endpoints * count;
  const deadline = performance.now() + 300_000;
  const delivered = () => paths.reduce((n, p) => n + (receiver.arrivals.get(p)?.length ?? 0), 0);
  while (delivered() < expected && performance.now() < deadline) await wait(10);
  const all = paths.flatMap((p) => receiver.arrivals.get(p) ?? []);
  const first = Math.min(...all.map((a) => a.at));
  const last = Math.max(...all.map((a) => a.at));
  let inOrder = true;
  let complete = true;
  for (const p of paths) {
    const got = (receiver.arrivals.get(p) ?? []).map((a) => a.id);
    const firsts = [...new Set(got)];
    if (firsts.length !== ids.length) complete = false;
    if (firsts.some((id, i) => id !== ids[i])) inOrder = false;
  }
  return { rate: all.length / ((last - first) / 1000), delivered: all.length, expected, inOrder, complete };
}

async function runOn(root, dialect, pgUrl, quick) {
  let dbConfig;
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
    database = `till_bench_webhooks_${randomUUID().slice(0, 8)}`;
    await admin.raw(`create database ${database}`);
    const u = new URL(pgUrl);
    u.pathname = `/${database}`;
    env = { TILL_DATABASE_URL: u.toString() };
    dbConfig = { client: 'postgres', connectionString: u.toString() };
  }
  const daemon = await startDaemon(root, env);
  if (dialect === 'sqlite') dbConfig = { client: 'sqlite', filename: join(daemon.dataDir, 'till.sqlite') };
  const receiver = await startReceiver();
  try {
    const seeded = await seed(daemon.url);
    const lat = await latency(daemon.url, seeded, receiver, quick ? 100 : 300);
    const one = await throughput(root, daemon.url, seeded, receiver, dbConfig, 1, quick ? 500 : 2000, 'one');
    const ten = await throughput(root, daemon.url, seeded, receiver, dbConfig, 10, quick ? 200 : 500, 'ten');
    const baseline = await baselineRate(receiver.url, quick ? 1000 : 3000);
    return { lat, one, ten, baseline };
  } finally {
    daemon.child.kill('SIGTERM');
    await new Promise((resolve) => daemon.child.once('exit', resolve));
    await receiver.close();
    rmSync(daemon.dataDir, { recursive: true, force: true });
    if (admin) {
      await admin.raw(`drop database if exists ${database} with (force)`);
      await admin.destroy();
    }
  }
}

export async function benchWebhooks({ root, quick }) {
  const pgUrl = process.env.TILL_BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const load = loadavg().map((x) => x.toFixed(2)).join(', ');
  const rows = [];
  for (const dialect of ['sqlite', 'postgres']) {
    const r = await runOn(root, dialect, pgUrl, quick);
    if (!r) {
      rows.push(`| ${dialect} | skipped: ${pgUrl} not reachable | | | |`);
      continue;
    }
    const met = (ok) => (ok ? 'met' : '**missed**');
    rows.push(
      `| ${dialect} | commit → delivered, p50 / p90 / p99 / max | ${ms(r.lat.p50)} / ${ms(r.lat.p90)} / ${ms(r.lat.p99)} / ${ms(r.lat.max)} | p99 < 50 ms | ${met(r.lat.p99 < 50)} |`,
      `| ${dialect} | one endpoint, ${r.one.expected} events (in order: ${r.one.inOrder ? 'yes' : '**no**'}, all: ${r.one.complete ? 'yes' : '**no**'}) | ${Math.round(r.one.rate)}/s (${(r.one.rate / r.baseline).toFixed(2)}× the baseline's ${Math.round(r.baseline)}/s) | ≥ 500/s | ${met(r.one.rate >= 500 && r.one.inOrder && r.one.complete)} |`,
      `| ${dialect} | ten endpoints, ${r.ten.expected} deliveries (in order: ${r.ten.inOrder ? 'yes' : '**no**'}, all: ${r.ten.complete ? 'yes' : '**no**'}) | ${Math.round(r.ten.rate)}/s | ≥ 1,000/s | ${met(r.ten.rate >= 1000 && r.ten.inOrder && r.ten.complete)} |`,
    );
  }
  return `## Webhook delivery (issue 21)

One tilld, its endpoints on a local receiver that answers 204 at once (\`TILL_WEBHOOKS_ALLOW_PRIVATE=1\`). Latency: customers
created one at a time with 20 ms between them, from sending the request to the event's arrival. Throughput: events
committed together into the outbox, delivered to one endpoint and to ten; the rate counts arrivals between the first
and the last. Baseline: the same receiver answering POSTs sent one after another over one kept-alive connection from
the benchmark itself, the ceiling of a strictly ordered delivery to one endpoint. Load average at the start: ${load}.

| Database | What | Measured | Target | |
|---|---|---|---|---|
${rows.join('\n')}
`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = new URL('..', import.meta.url).pathname;
  console.log(await benchWebhooks({ root, quick: process.argv.includes('--quick') }));
}
