// The webhook delivery benchmark (issue 21): how long an event committed by tilld takes to reach an endpoint, and
// how many deliveries a second tilld makes to one endpoint and across ten, on SQLite and PostgreSQL. The baseline is
// the same receiver answering POSTs sent one at a time over one kept-alive connection from this process: the most a
// strictly ordered, one-at-a-time delivery to one endpoint could do here.
// `scripts/bench.mjs` calls benchWebhooks() and puts its section in docs/performance.md; `node scripts/bench-webhooks.mjs
// [--quick]` runs it alone and prints the section; TILL_BENCH_DIALECTS=sqlite|postgres runs one database, and
// TILL_BENCH_POSTGRES_URL names the PostgreSQL server (postgres://postgres@127.0.0.1:5432/postgres). scripts/ab-webhooks.mjs
// runs the throughput of several builds side by side.
import { randomUUID } from 'node:crypto';
import { createServer, request } from 'node:http';
import { Agent } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { json, postgresDatabase, signUpSeller, startTilld, wait } from './bench-daemon.mjs';

const SECRET = 'bench-secret-bench-secret-bench-secret-00';
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => `${x.toFixed(1)} ms`;

/** A local endpoint: answers 204 at once and records when each event arrived, per path, in arrival order. */
export async function startReceiver() {
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

/** Webhooks to this machine allowed, rate limiting off, request lines logged (to /dev/null). */
const startDaemon = (root, env) =>
  startTilld(root, { env: { TILL_LOG_LEVEL: 'info', TILL_RATE_LIMIT: 'off', TILL_SECRET: SECRET, TILL_WEBHOOKS_ALLOW_PRIVATE: '1', ...env } });

export async function seed(url) {
  const { session, organizationId } = await signUpSeller(url);
  return { token: session, organizationId };
}

const endpoint = (url, seeded, target) =>
  json(`${url}/v1/webhooks/endpoints`, { method: 'POST', body: JSON.stringify({ organization_id: seeded.organizationId, url: target, format: 'raw', events: ['customer.created', 'customer.updated'] }) }, seeded.token).then((r) => r.body.id);

/**
 * Commit → delivered: customers created one at a time with a pause between (the worker is idle when each commits);
 * the time from sending the request (an upper bound on its commit) to the event's arrival.
 */
export async function latency(url, seeded, receiver, count, path = '/latency') {
  await endpoint(url, seeded, `${receiver.url}${path}`);
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const { body } = await json(`${url}/v1/customers/`, { method: 'POST', body: JSON.stringify({ organization_id: seeded.organizationId, email: `l${i}-${randomUUID().slice(0, 6)}@bench.example` }) }, seeded.token);
    // The event's webhook-id is the outbox event's id, not the customer's: find the arrival by the customer id in the body.
    for (;;) {
      const arrived = (receiver.arrivals.get(path) ?? []).length > i;
      if (arrived) break;
      await wait(1);
    }
    times.push(receiver.arrivals.get(path)[i].at - started);
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
export async function throughput(root, url, seeded, receiver, dbConfig, endpoints, count, label) {
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
  let database;
  if (dialect === 'postgres') {
    database = await postgresDatabase(pgUrl, 'till_bench_webhooks');
    if (!database) return undefined;
    dbConfig = { client: 'postgres', connectionString: database.url };
  }
  const daemon = await startDaemon(root, database?.env ?? {});
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
    await daemon.stop();
    await receiver.close();
    await database?.drop();
  }
}

export async function benchWebhooks({ root, quick }) {
  const pgUrl = process.env.TILL_BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const load = loadavg().map((x) => x.toFixed(2)).join(', ');
  const rows = [];
  const only = process.env.TILL_BENCH_DIALECTS ? process.env.TILL_BENCH_DIALECTS.split(',') : ['sqlite', 'postgres'];
  for (const dialect of only) {
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
