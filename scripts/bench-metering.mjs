// The usage-metering benchmark (issue 6): event ingestion over HTTP against the raw insert of the same rows
// through the same driver, and meter quantities against hand-written SQL, on SQLite and PostgreSQL, with the
// daemon's peak RSS. `scripts/bench.mjs` calls benchMetering() and puts its section in docs/performance.md;
// `node scripts/bench-metering.mjs [--quick]` runs it alone and replaces that section in the file.
//
// TILL_BENCH_EVENTS (default 1,000,000; --quick 100,000) events, batches of 1,000 from TILL_BENCH_CLIENTS (4)
// concurrent clients. TILL_BENCH_SEED=raw skips the ingestion over HTTP: the events are inserted straight into the
// table (tilld stopped), tilld builds the meters' rollups by its backfill, and only the quantities are measured; with
// TILL_BENCH_EVENTS=10000000 it is the 10-million-event run of issue 21 (not part of npm run bench: it takes long).
// TILL_BENCH_RUNS (default 9) sets the runs each figure is the median of. TILL_BENCH_DIALECTS=sqlite|postgres runs one database. PostgreSQL: TILL_BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres; a
// fresh database is created and dropped); skipped, and said so, when it cannot be reached. TILL_BENCH_QUIET_LOAD=L: once
// the rollups are whole, the quantities wait until the machine's 1-minute load average is under L (a long seeding can
// run beside other work and still be measured quietly); the load when measuring is printed with the figures, and two such runs (one a
// database) measure one after the other.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const BATCH = 1000;
const CUSTOMERS = 100;
const DAY = 86_400_000;
const SPAN_DAYS = 90;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rate = (n, ms) => Math.round(n / (ms / 1000));
const thousands = (n) => Math.round(n).toLocaleString('en-US');

/** The i-th of `total` events: spread over customers and the last 90 days (whatever the total), with a token count. */
function eventOf(i, customers, now, total) {
  return {
    name: i % 10 === 0 ? 'api_error' : 'api_call',
    customer_id: customers[i % customers.length],
    timestamp: new Date(now - SPAN_DAYS * DAY + Math.floor((i / (total + 3)) * SPAN_DAYS * DAY) + (i % 1000)).toISOString(),
    external_id: `bench-${i}`,
    metadata: { tokens: (i % 97) + 1, model: i % 3 === 0 ? 'large' : 'small' },
  };
}

function peakRss(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return { peak: Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024, now: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024 };
  } catch {
    return { peak: 0, now: 0 };
  }
}

export async function startDaemon(root, env, port) {
  const dataDir = mkdtempSync(join(tmpdir(), 'till-bench-metering-'));
  // TILL_BENCH_DAEMON_NODE_ARGS: node's options for tilld alone (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const nodeArgs = (process.env.TILL_BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'bin/tilld')], {
    env: { ...process.env, TILL_PORT: String(port), TILL_DATA_DIR: dataDir, TILL_LOG_LEVEL: 'warn', TILL_RATE_LIMIT: 'off', TILL_SECRET: 'bench-secret-bench-secret-bench-secret-00', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { child, url, dataDir };
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error('tilld did not start');
}

export async function json(url, init, token, attempt = 1) {
  let res;
  try {
    res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', origin: new URL(url).origin, ...(token ? { authorization: `Bearer ${token}` } : {}), ...init?.headers } });
  } catch (error) {
    // A kept-alive connection the server closed as the request went out: resend (ingest dedupes on external_id).
    if (attempt < 3) return json(url, init, token, attempt + 1);
    throw error;
  }
  const text = await res.text();
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return { body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** The two meters the quantities read: count and sum(tokens) of the api_call events. */
async function createMeters(url, token, organizationId) {
  const meter = (name, aggregation) =>
    json(`${url}/v1/meters/`, { method: 'POST', body: JSON.stringify({ organization_id: organizationId, name, filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api_call' }] }, aggregation }) }, token).then((r) => r.body.id);
  return { countMeter: await meter('API calls', { func: 'count' }), sumMeter: await meter('Tokens', { func: 'sum', property: 'tokens' }) };
}

/** A seller with an organization, customers and (unless `meters` is false) two meters on a fresh daemon. */
async function seed(url, { meters: withMeters = true } = {}) {
  const signUp = await json(`${url}/api/auth/sign-up/email`, { method: 'POST', body: JSON.stringify({ name: 'Bench', email: `bench-${randomUUID()}@example.com`, password: 'bench-password-123' }) });
  const token = signUp.headers.get('set-auth-token');
  const organizationId = (await json(`${url}/api/auth/organization/create`, { method: 'POST', body: JSON.stringify({ name: 'Bench', slug: `bench-${randomUUID().slice(0, 8)}` }) }, token)).body.id;
  const customers = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    customers.push((await json(`${url}/v1/customers/`, { method: 'POST', body: JSON.stringify({ organization_id: organizationId, email: `c${i}@bench.example` }) }, token)).body.id);
  }
  const meters = withMeters ? await createMeters(url, token, organizationId) : {};
  // A seller's backend ingests and reads with an organization access token, as it would against Polar.
  const access = await json(`${url}/v1/organization-access-tokens/`, { method: 'POST', body: JSON.stringify({ organization_id: organizationId, comment: 'bench', scopes: ['events:write', 'meters:read'] }) }, token);
  return { token: access.body.token, session: token, organizationId, customers, ...meters };
}

/** CPU time (user + system) a process has used so far, in ms. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 1/100 s
  } catch {
    return NaN;
  }
}

/**
 * Ingests `total` events over HTTP from `clients` concurrent clients; samples the daemon's RSS as it goes. The
 * request bodies are serialized before the clock starts: on two cores, building a million events' JSON in the
 * load generator would take CPU from the daemon it measures.
 */
async function ingest(url, pid, seeded, total, clients, now) {
  const batches = Math.ceil(total / BATCH);
  const bodies = [];
  for (let batch = 0; batch < batches; batch++) {
    const events = [];
    for (let i = batch * BATCH; i < Math.min(total, (batch + 1) * BATCH); i++) events.push(eventOf(i, seeded.customers, now, total));
    bodies.push({ text: JSON.stringify({ events }), count: events.length });
  }
  let next = 0;
  const samples = [];
  const sampler = setInterval(() => samples.push(peakRss(pid).now), 1000);
  const cpuBefore = cpuMs(pid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let batch = next++; batch < batches; batch = next++) {
        const { body } = await json(`${url}/v1/events/ingest`, { method: 'POST', body: bodies[batch].text }, seeded.token);
        if (body.inserted + body.duplicates !== bodies[batch].count) throw new Error(`batch ${batch}: ${JSON.stringify(body)}`);
      }
    }),
  );
  const ms = performance.now() - started;
  const cpu = cpuMs(pid) - cpuBefore;
  clearInterval(sampler);
  return { ms, cpu, rss: { peak: peakRss(pid).peak, samples } };
}

async function timeQuantities(url, token, meterId, query, runs) {
  const times = [];
  let answer;
  for (let i = 0; i < runs + 2; i++) {
    const started = performance.now();
    answer = (await json(`${url}/v1/meters/${meterId}/quantities?${new URLSearchParams(query)}`, undefined, token)).body;
    if (i >= 2) times.push(performance.now() - started);
  }
  return { ms: median(times), answer };
}

async function timeSql(db, sql, bindings, runs) {
  const times = [];
  let rows;
  for (let i = 0; i < runs + 2; i++) {
    const started = performance.now();
    const result = await db.raw(sql, bindings);
    rows = Array.isArray(result) ? result : result.rows;
    if (i >= 2) times.push(performance.now() - started);
  }
  return { ms: median(times), rows };
}

/**
 * The aggregation a person would write by hand, in two forms: GROUP BY a bucket expression, and one subquery per
 * bucket over a VALUES list of bucket bounds (not for hours: 2,160 subqueries). The baseline of a quantities call is
 * whichever is faster.
 */
function handWritten(pg, func, bucket, who, form, { start, end, organizationId, customer }) {
  const value = func === 'count' ? 'count(*)' : pg ? "sum((metadata->>'tokens')::double precision)" : "sum(json_extract(metadata, '$.tokens'))";
  const where = `organization_id = ? and source = 'user' and name = 'api_call'${who === 'customer' ? ' and customer_id = ?' : ''}`;
  const whereBindings = who === 'customer' ? [organizationId, customer] : [organizationId];
  if (form === 'group by') {
    const width = bucket === 'hour' ? 3_600_000 : DAY;
    // UTC hours and days, as the API's buckets in timezone UTC (the timestamps are after 1970).
    const key = bucket === 'month' ? (pg ? "date_trunc('month', to_timestamp(timestamp_ms / 1000.0) at time zone 'UTC')" : "strftime('%Y-%m', timestamp_ms / 1000, 'unixepoch')") : `timestamp_ms / ${width}`;
    return { sql: `select ${key} as bucket, ${value} as q from events where ${where} and timestamp_ms >= ? and timestamp_ms <= ? group by 1 order by 1`, bindings: [...whereBindings, start, end] };
  }
  const bounds = [];
  for (let from = start; from <= end; ) {
    const date = new Date(from);
    const to = bucket === 'day' ? from + DAY : Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    bounds.push(`(${from}, ${Math.min(to, end + 1)})`);
    from = to;
  }
  return {
    sql: `with b(lo, hi) as (values ${bounds.join(', ')}) select b.lo as bucket, (select ${value} from events where ${where} and timestamp_ms >= b.lo and timestamp_ms < b.hi) as q from b`,
    bindings: whereBindings,
  };
}

async function bestHandWritten(db, pg, func, bucket, who, context, runs) {
  const forms = [];
  for (const form of bucket === 'hour' ? ['group by'] : ['group by', 'subquery per bucket']) {
    const { sql, bindings } = handWritten(pg, func, bucket, who, form, context);
    forms.push({ form, ...(await timeSql(db, sql, bindings, runs)) });
  }
  // The group-by form's rows, to compare bucket by bucket (its keys differ from the API's timestamps, its values not).
  return { ...forms.sort((a, b) => a.ms - b.ms)[0], groupRows: forms.find((f) => f.form === 'group by').rows };
}

/** The quantities asked for: two meters, everyone's and one customer's, by hour, day and month. */
const QUANTITIES = ['count', 'sum'].flatMap((func) => ['everyone', 'customer'].flatMap((who) => ['hour', 'day', 'month'].map((bucket) => ({ key: `${func}-${who}-${bucket}`, func, who, bucket }))));
const labelOf = ({ func, who, bucket }) => `${func === 'count' ? 'count' : 'sum(tokens)'}, ${who === 'everyone' ? 'everyone' : 'one customer'}, by ${bucket}`;

/** The raw insert of the same rows through the same driver, on a fresh database with the same schema. */
async function rawInsert(root, pg, config, total, customers, organizationId, now) {
  const { createDatabase } = await import(join(root, 'dist/core/db/database.js'));
  const { migrateToLatest } = await import(join(root, 'dist/core/db/migrate.js'));
  const db = createDatabase(config);
  await migrateToLatest(db);
  await db('organization').insert({ id: organizationId, name: 'Raw', slug: `raw-${randomUUID().slice(0, 8)}`, createdAt: new Date().toISOString() });
  const ms = await insertRows(root, db, pg, total, customers, organizationId, now);
  await db.destroy();
  return ms;
}

/** Inserts events 0 … total-1 (eventOf) straight into the events table, as the raw baseline does; answers the time taken. */
async function insertRows(root, db, pg, total, customers, organizationId, now) {
  const columns = ['id', 'organization_id', 'name', 'source', 'timestamp_ms', 'ingested_ms', 'customer_id', 'external_customer_id', 'external_id', 'parent_id', 'metadata'];
  // The ids ingest gives events (time-ordered UUIDs), so the rows are the same.
  const { newTimeOrderedId } = await import(join(root, 'dist/core/db/columns.js'));
  const rowOf = (i) => {
    const event = eventOf(i, customers, now, total);
    return [newTimeOrderedId(), organizationId, event.name, 'user', Date.parse(event.timestamp), now, event.customer_id, null, event.external_id, null, JSON.stringify(event.metadata)];
  };
  let ms;
  if (pg) {
    // node-postgres, multi-row INSERT of 1,000 rows (11,000 parameters) per statement.
    const connection = await db.client.acquireConnection();
    const placeholders = (count) => Array.from({ length: count }, (_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`).join(', ');
    const full = placeholders(BATCH);
    const started = performance.now();
    for (let start = 0; start < total; start += BATCH) {
      const rows = [];
      for (let i = start; i < Math.min(total, start + BATCH); i++) rows.push(...rowOf(i));
      const count = rows.length / columns.length;
      await connection.query(`insert into events (${columns.join(', ')}) values ${count === BATCH ? full : placeholders(count)}`, rows);
    }
    ms = performance.now() - started;
    await db.client.releaseConnection(connection);
  } else {
    // better-sqlite3, one prepared INSERT, 1,000 rows a transaction.
    const connection = await db.client.acquireConnection();
    const statement = connection.prepare(`insert into events (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
    const insertMany = connection.transaction((rows) => {
      for (const row of rows) statement.run(row);
    });
    const started = performance.now();
    for (let start = 0; start < total; start += BATCH) {
      const rows = [];
      for (let i = start; i < Math.min(total, start + BATCH); i++) rows.push(rowOf(i));
      insertMany(rows);
    }
    ms = performance.now() - started;
    await db.client.releaseConnection(connection);
  }
  return ms;
}

export async function pgDatabase(serverUrl) {
  const { default: knex } = await import('knex');
  const admin = knex({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  try {
    await admin.raw('select 1');
  } catch (error) {
    await admin.destroy();
    return { unavailable: String(error.message ?? error) };
  }
  const names = [`till_bench_${randomUUID().slice(0, 8)}`, `till_bench_raw_${randomUUID().slice(0, 8)}`];
  for (const name of names) await admin.raw(`create database ${name}`);
  const urlOf = (name) => {
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  return {
    daemonUrl: urlOf(names[0]),
    rawUrl: urlOf(names[1]),
    async drop() {
      for (const name of names) await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}

const stopDaemon = async (daemon) => {
  daemon.child.kill('SIGTERM');
  await new Promise((resolve) => daemon.child.once('exit', resolve));
};

async function benchDialect(root, dialect, { total, clients, port, pgUrl, seedRaw }) {
  const pg = dialect === 'postgres';
  const databases = pg ? await pgDatabase(pgUrl) : undefined;
  if (databases?.unavailable) return { dialect, skipped: `PostgreSQL unreachable at ${pgUrl}: ${databases.unavailable}` };
  const env = pg ? { TILL_DATABASE_URL: databases.daemonUrl } : {};
  let daemon = await startDaemon(root, env, port);
  const dataDir = daemon.dataDir;
  const { createDatabase } = await import(join(root, 'dist/core/db/database.js'));
  const dbConfig = pg ? { client: 'postgres', connectionString: databases.daemonUrl } : { client: 'sqlite', filename: join(dataDir, 'till.sqlite') };
  // TILL_BENCH_QUIET_LOAD's turn to measure, while this run holds it.
  let turn;
  try {
    const now = Date.now() - DAY;
    let seeded;
    let http;
    let seeding;
    if (!seedRaw) {
      seeded = await seed(daemon.url);
      http = await ingest(daemon.url, daemon.child.pid, seeded, total, clients, now);
    } else {
      // TILL_BENCH_SEED=raw: the events go straight into the table with tilld stopped (as the raw baseline inserts
      // them), then tilld builds the rollups of meters created after them (its backfill job), timed until whole.
      seeded = await seed(daemon.url, { meters: false });
      await stopDaemon(daemon);
      const seedDb = createDatabase(dbConfig);
      const insertMs = await insertRows(root, seedDb, pg, total, seeded.customers, seeded.organizationId, now);
      await seedDb.destroy();
      daemon = await startDaemon(root, { ...env, TILL_DATA_DIR: dataDir }, port);
      Object.assign(seeded, await createMeters(daemon.url, seeded.session, seeded.organizationId));
      seeding = { insertMs };
    }

    const daemonDb = createDatabase(dbConfig);
    // Quantities from rollups once they are whole: a meter's backfill (it was created just before the events) may
    // still be catching up with the ingestion; the wait is part of the figures.
    const readyStarted = performance.now();
    for (;;) {
      const states = await daemonDb('meter_rollup_states').whereIn('meter_id', [seeded.countMeter, seeded.sumMeter]).select('status');
      if (states.length === 2 && states.every((state) => state.status === 'ready')) break;
      if (performance.now() - readyStarted > 3_600_000) throw new Error(`${dialect}: the meters' rollups were not whole an hour after ingestion`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const rollupsReadyMs = performance.now() - readyStarted;
    // PostgreSQL answers from an index alone only for pages its visibility map marks all-visible, which autovacuum
    // does some time after a bulk load; run it now, as a settled database would have, for both sides alike.
    let vacuumMs = 0;
    if (pg) {
      const started = performance.now();
      await daemonDb.raw('vacuum analyze events');
      vacuumMs = performance.now() - started;
    }
    const quietLoad = Number(process.env.TILL_BENCH_QUIET_LOAD || 0);
    if (quietLoad > 0) {
      const waitStarted = performance.now();
      while (loadavg()[0] >= quietLoad) {
        if (performance.now() - waitStarted > 4 * 3_600_000) throw new Error(`${dialect}: the load stayed at or over ${quietLoad} for four hours`);
        console.error(`metering: ${dialect}: waiting for a load under ${quietLoad} (now ${loadavg()[0].toFixed(2)})…`);
        await new Promise((resolve) => setTimeout(resolve, 30_000));
      }
    }
    // Two raw-seeded runs side by side (one a database) take turns to measure: a directory made atomically is the turn.
    turn = quietLoad > 0 ? join(tmpdir(), 'till-bench-quantities.turn') : undefined;
    if (turn) {
      for (;;) {
        try {
          mkdirSync(turn);
          break;
        } catch {
          console.error(`metering: ${dialect}: waiting for the other run to measure…`);
          await new Promise((resolve) => setTimeout(resolve, 15_000));
        }
      }
    }
    const measuredAtLoad = loadavg().map((value) => value.toFixed(2)).join(', ');
    console.error(`metering: ${dialect}: measuring quantities at load ${measuredAtLoad}`);
    const start = now - SPAN_DAYS * DAY;
    const end = now;
    // TILL_BENCH_RUNS: runs a figure is the median of (9); at 10,000,000 events the hand-written SQL takes seconds a run.
    const runs = Number(process.env.TILL_BENCH_RUNS || 9);
    const range = { start_timestamp: new Date(start).toISOString(), end_timestamp: new Date(end).toISOString() };
    // customers[0] has every 100th event: all named api_error (every 10th is), none the meters count.
    const customer = seeded.customers[1];
    // The floor under every HTTP call: an authenticated read that aggregates nothing.
    const floorTimes = [];
    for (let i = 0; i < runs + 2; i++) {
      const started = performance.now();
      await json(`${daemon.url}/v1/meters/${seeded.countMeter}`, undefined, seeded.token);
      if (i >= 2) floorTimes.push(performance.now() - started);
    }
    const floorMs = median(floorTimes);
    const context = { start, end, organizationId: seeded.organizationId, customer };
    const { meterQuantities } = await import(join(root, 'dist/core/metering/quantities.js'));
    const { findMeter } = await import(join(root, 'dist/core/metering/meters-repository.js'));
    const calls = {};
    const sql = {};
    // The same quantities computed in process (core's meterQuantities on the same database, no HTTP): what the
    // query Till compiles costs, apart from the request's authentication and transport.
    const inProcess = {};
    for (const q of QUANTITIES) {
      const meterId = q.func === 'count' ? seeded.countMeter : seeded.sumMeter;
      calls[q.key] = await timeQuantities(daemon.url, seeded.token, meterId, { ...range, interval: q.bucket, ...(q.who === 'customer' ? { customer_id: customer } : {}) }, runs);
      sql[q.key] = await bestHandWritten(daemonDb, pg, q.func, q.bucket, q.who, context, runs);
      const meter = await findMeter(daemonDb, meterId, [seeded.organizationId]);
      const times = [];
      for (let i = 0; i < runs + 2; i++) {
        const t = performance.now();
        await meterQuantities(daemonDb, meter, { start: new Date(start), end: new Date(end), interval: q.bucket, timezone: 'UTC', customerIds: q.who === 'customer' ? [customer] : undefined }, { source: 'rollups' });
        if (i >= 2) times.push(performance.now() - t);
      }
      inProcess[q.key] = median(times);
    }
    const sumOf = (rows) => rows.reduce((sum, row) => sum + Number(row.q), 0);
    for (const [key, call] of Object.entries(calls)) {
      if (!(call.answer.total > 0)) throw new Error(`${dialect} ${key}: the quantities call counted nothing, so its timing would mean nothing`);
    }
    // Equal to the raw aggregation: the totals, and bucket by bucket (the non-zero quantities, sorted).
    const nonZero = (values) => values.map(Number).filter((v) => v !== 0).sort((a, b) => a - b);
    const sameBuckets = (key) => {
      const api = nonZero(calls[key].answer.quantities.map((b) => b.quantity));
      const raw = nonZero(sql[key].groupRows.map((row) => row.q));
      return api.length === raw.length && api.every((v, i) => Math.abs(v - raw[i]) < 1e-6);
    };
    const agreement = Object.fromEntries(Object.keys(calls).map((key) => [key, Math.abs(calls[key].answer.total - sumOf(sql[key].rows)) < 1e-6 && sameBuckets(key)]));
    const agree = Object.values(agreement).every(Boolean);
    if (turn) rmSync(turn, { recursive: true, force: true });
    turn = undefined;
    await daemonDb.destroy();
    if (seedRaw) return { dialect, seeding, calls, sql, inProcess, agree, agreement, vacuumMs, floorMs, rollupsReadyMs, runs, measuredAtLoad };
    const rawMs = await rawInsert(root, pg, pg ? { client: 'postgres', connectionString: databases.rawUrl } : { client: 'sqlite', filename: join(mkdtempSync(join(tmpdir(), 'till-bench-raw-')), 'raw.db') }, total, seeded.customers, seeded.organizationId, now);
    return { dialect, http, rawMs, calls, sql, inProcess, agree, agreement, vacuumMs, floorMs, rollupsReadyMs, runs, measuredAtLoad };
  } finally {
    if (turn) rmSync(turn, { recursive: true, force: true });
    await stopDaemon(daemon);
    rmSync(dataDir, { recursive: true, force: true });
    await databases?.drop?.();
  }
}

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const ms = (value) => `${value.toFixed(1)} ms`;

function section(results, { total, clients }) {
  const targets = { sqlite: 40_000, postgres: 20_000 };
  const lines = [
    '## Usage metering',
    '',
    `${thousands(total)} events ingested over HTTP (\`POST /v1/events/ingest\`, batches of ${BATCH} from ${clients} concurrent clients) into`,
    `a fresh daemon, against the raw insert of the same rows into the same table and indexes through the same driver`,
    '(better-sqlite3: one prepared INSERT, 1,000 rows a transaction; node-postgres: 1,000-row multi-row INSERTs).',
    `Then quantities of two meters (\`count\` and \`sum(tokens)\`, both filtered on the event name) over ${SPAN_DAYS} days,`,
    "everyone's and one customer's, by hour, day and month, over HTTP, against the hand-written aggregation SQL run on the",
    "same database. The calls carry an organization access token, as a seller's backend would. The request bodies are built",
    'before the clock starts (the load generator shares the two cores with the daemon). Targets: HTTP ingestion',
    '≥ 50 % of the raw rate with rollups on (issue 21) and ≥ 40,000 events/s on SQLite, ≥ 20,000 on PostgreSQL (issue 6);',
    'a quantities call under 50 ms and equal to the raw aggregation (issue 21), ≤ 1.5× the best hand-written SQL (issue 6).',
    '',
    "Ingestion includes what each batch adds to the customers' usage rows and to the meters' hourly rollups (same",
    'transaction); the API\'s quantities of these two meters come from the rollups (docs/metering.md, "Rollups"), the',
    '"In process" column too; the hand-written SQL aggregates the events, so the API\'s totals equalling it checks the',
    'rollups against the raw aggregation.',
    '',
    `Run on ${cpus().length} CPUs with a load average of ${loadavg()[0].toFixed(1)} at the end (other work on the machine slows both`,
    'sides of each comparison, the absolute rates most).',
    '',
  ];
  for (const result of results) {
    const name = result.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    if (result.skipped) {
      lines.push(`### ${name}`, '', `Not measured: ${result.skipped}.`, '');
      continue;
    }
    if (result.seeding) {
      lines.push(
        `### ${name} (${thousands(total)} events seeded by raw insert)`,
        '',
        `TILL_BENCH_SEED=raw: no ingestion over HTTP. The events were inserted straight into the table with tilld stopped (${ms(result.seeding.insertMs)}),`,
        `then the two meters created, and tilld's backfill built their rollups from the events in ${ms(result.rollupsReadyMs)}.`,
        `The quantities were measured at a load average of ${result.measuredAtLoad} (1, 5, 15 min).`,
        '',
      );
    } else {
      const httpRate = rate(total, result.http.ms);
      const rawRate = rate(total, result.rawMs);
      const share = httpRate / rawRate;
      const flat = result.http.rss.samples.length ? `${mb(Math.min(...result.http.rss.samples))} – ${mb(Math.max(...result.http.rss.samples))}` : 'n/a';
      lines.push(
        `### ${name}`,
        '',
        '| Ingestion | Time | Events/s | Target | |',
        '|---|---|---|---|---|',
        `| raw insert (baseline) | ${ms(result.rawMs)} | ${thousands(rawRate)} | | |`,
        `| over HTTP, rollups on | ${ms(result.http.ms)} | ${thousands(httpRate)} | ≥ 50 % of raw (${(share * 100).toFixed(0)} %) | ${share >= 0.5 ? 'met' : '**missed**'} |`,
        `| | | | ≥ ${thousands(targets[result.dialect])}/s | ${httpRate >= targets[result.dialect] ? 'met' : '**missed**'} |`,
        '',
        `Daemon CPU while ingesting: ${thousands(result.http.cpu)} ms (${((result.http.cpu * 1000) / total).toFixed(1)} µs an event, parsing, checking and inserting).`,
        `Daemon RSS while ingesting (sampled each second): ${flat}; peak ${mb(result.http.rss.peak)}.`,
        '',
        `Rollups of both meters whole ${ms(result.rollupsReadyMs)} after the last ingest answered (their backfill catching up, if it had to).`,
        '',
      );
    }
    lines.push(
      ...(result.vacuumMs ? [`Before the quantities: \`VACUUM ANALYZE events\` (${ms(result.vacuumMs)}), what autovacuum does some time after a bulk load.`, ''] : []),
      `Quantities, median of ${result.runs}. Baseline: the faster of two hand-written forms (GROUP BY a bucket expression, or a`,
      "subquery per bucket), named in the table. \"In process\" is core's `meterQuantities` on the same database (the",
      'query Till compiles, no HTTP); "HTTP call" adds authentication, the meter lookup and the round trip.',
      `The floor under any HTTP call here, an authenticated \`GET /v1/meters/{id}\`: ${ms(result.floorMs)}; where the SQL takes less, 1.5× of it cannot be met over HTTP.`,
      '',
      '| Quantities | Total | Hand-written SQL | In process | Ratio | HTTP call | Ratio | ≤ 1.5× (HTTP) | < 50 ms (HTTP) | = raw |',
      '|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const q of QUANTITIES) {
      const call = result.calls[q.key].ms;
      const base = result.sql[q.key].ms;
      const local = result.inProcess[q.key];
      lines.push(
        `| ${labelOf(q)} | ${thousands(result.calls[q.key].answer.total)} | ${ms(base)} (${result.sql[q.key].form}) | ${ms(local)} | ${(local / base).toFixed(2)} | ${ms(call)} | ${(call / base).toFixed(2)} | ${call <= 1.5 * base ? 'met' : '**missed**'} | ${call < 50 ? 'met' : '**missed**'} | ${result.agreement[q.key] ? 'yes' : '**no**'} |`,
      );
    }
    lines.push('', `The API's quantities ${result.agree ? 'equal' : '**differ from**'} the hand-written SQL's (totals, and bucket by bucket against its GROUP BY form: "= raw").`, '');
  }
  return lines.join('\n');
}

/** Runs the metering benchmark on SQLite and PostgreSQL and returns its section of docs/performance.md. */
export async function benchMetering({ root, quick = false }) {
  const total = Number(process.env.TILL_BENCH_EVENTS || (quick ? 100_000 : 1_000_000));
  const clients = Number(process.env.TILL_BENCH_CLIENTS || 4);
  const pgUrl = process.env.TILL_BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const results = [];
  const only = process.env.TILL_BENCH_DIALECTS ? process.env.TILL_BENCH_DIALECTS.split(',') : ['sqlite', 'postgres'];
  for (const [index, dialect] of ['sqlite', 'postgres'].entries()) {
    if (!only.includes(dialect)) continue;
    console.error(`metering: ${dialect}, ${thousands(total)} events…`);
    results.push(await benchDialect(root, dialect, { total, clients, port: 5101 + index, pgUrl, seedRaw: process.env.TILL_BENCH_SEED === 'raw' }));
  }
  return section(results, { total, clients });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = new URL('..', import.meta.url).pathname;
  const text = await benchMetering({ root, quick: process.argv.includes('--quick') });
  // A raw-seeded run measures quantities only: it prints, and leaves docs/performance.md's section alone.
  if (process.env.TILL_BENCH_SEED !== 'raw') {
    const path = join(root, 'docs/performance.md');
    const current = existsSync(path) ? readFileSync(path, 'utf8') : '# Performance\n';
    const start = current.indexOf('## Usage metering');
    const after = start < 0 ? -1 : current.indexOf('\n## ', start + 1);
    const updated = start < 0 ? `${current.trimEnd()}\n\n${text}\n` : `${current.slice(0, start)}${text}\n${after < 0 ? '' : current.slice(after + 1)}`;
    writeFileSync(path, updated);
  }
  console.log(text);
}
