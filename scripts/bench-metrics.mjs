// The metrics benchmark (issue 20): GET /v1/metrics's computation (core/metrics getMetrics) for a year by day over
// 100,000 paid orders and 10,000 subscriptions, against hand-written SQL of the same figures (orders, revenue and
// net revenue per day; active subscriptions and MRR per day), on SQLite and PostgreSQL. `scripts/bench.mjs` calls
// benchMetrics() and puts its section in docs/performance.md; `node scripts/bench-metrics.mjs [--quick]` runs it
// alone and replaces that section in the file. Runs the compiled code in dist/ (npm run build first).
//
// The rows are seeded by direct inserts (100,000 orders through the services would take minutes), so the hourly
// metrics rollups that the services keep in each write's transaction are then built by the backfill the migration
// runs (rebuildMetricsRollups), timed and reported apart; the answer from the rollups is checked against the one
// computed from the rows.
//
// PostgreSQL: TILL_BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres; a fresh database is
// created and dropped); skipped, and said so, when it cannot be reached.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const DAY = 86_400_000;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => `${ms.toFixed(1)} ms`;

async function seed(db, { orders, subscriptions, start }) {
  const org = randomUUID();
  await db('organization').insert({ id: org, name: 'Bench', slug: `bench-${org.slice(0, 8)}`, createdAt: new Date(start).toISOString() });
  const product = randomUUID();
  await db('products').insert({ id: product, organization_id: org, name: 'Plan', visibility: 'public', is_archived: false, metadata: '{}', recurring_interval: 'month', recurring_interval_count: 1, created_at: new Date(start).toISOString() });
  const customers = Array.from({ length: subscriptions }, () => randomUUID());
  const at = (ms) => new Date(ms).toISOString();
  for (let i = 0; i < customers.length; i += 500) {
    await db('customers').insert(customers.slice(i, i + 500).map((id, j) => ({ id, organization_id: org, email: `c${i + j}@bench.example`, email_lower: `c${i + j}@bench.example`, metadata: '{}', created_at: at(start) })));
  }
  const subs = customers.map((customer, i) => {
    const started = start - 30 * DAY + Math.floor((i / subscriptions) * 380 * DAY);
    const ended = i % 5 === 0 ? started + 90 * DAY : null;
    return {
      id: randomUUID(), organization_id: org, customer_id: customer, product_id: product, status: ended ? 'canceled' : 'active',
      amount: 1000 + (i % 7) * 500, currency: 'usd', recurring_interval: i % 10 === 0 ? 'year' : 'month', recurring_interval_count: 1,
      billing_anchor: at(started), cycle: 0, current_period_start: at(started), current_period_end: at(started + 30 * DAY),
      cancel_at_period_end: false, canceled_at: ended ? at(ended - 10 * DAY) : null, started_at: at(started), ended_at: ended ? at(ended) : null,
      customer_cancellation_reason: ended ? 'too_expensive' : null, pending_items: '[]', metadata: '{}', custom_field_data: '{}', created_at: at(started),
    };
  });
  for (let i = 0; i < subs.length; i += 200) await db('subscriptions').insert(subs.slice(i, i + 200));
  const rows = [];
  for (let i = 0; i < orders; i++) {
    const sub = i % 3 === 0 ? null : subs[i % subs.length];
    const created = start + Math.floor((i / orders) * 365 * DAY) + (i % 1000);
    rows.push({
      id: randomUUID(), organization_id: org, customer_id: sub ? sub.customer_id : customers[i % customers.length], product_id: product,
      subscription_id: sub ? sub.id : null, status: i % 50 === 0 ? 'partially_refunded' : 'paid', billing_reason: sub ? 'subscription_cycle' : 'purchase',
      currency: 'usd', subtotal_amount: 1500, discount_amount: 0, net_amount: 1500, tax_amount: 0, total_amount: 1500, applied_balance_amount: 0,
      refunded_amount: i % 50 === 0 ? 500 : 0, refunded_tax_amount: 0, platform_fee_amount: 0, invoice_number: `B-${i}`, is_invoice_generated: false,
      metadata: '{}', custom_field_data: '{}', created_at: at(created),
    });
    if (rows.length === 500) await db('orders').insert(rows.splice(0));
  }
  if (rows.length) await db('orders').insert(rows);
  return org;
}

/** The same figures written by hand for one dialect: per UTC day, paid orders, revenue and net; active subscriptions and MRR. */
async function handWritten(db, pg, org, from, to) {
  const rows = (r) => (Array.isArray(r) ? r : r.rows);
  const day = pg ? `date_trunc('day', o.created_at at time zone 'UTC')` : `substr(o.created_at, 1, 10)`;
  const orders = rows(await db.raw(
    `select ${day} as d, count(*) as n, sum(o.net_amount) as revenue, sum(o.net_amount - o.platform_fee_amount - o.refunded_amount) as net
     from orders o where o.organization_id = ? and o.currency = 'usd' and o.status in ('paid', 'partially_refunded', 'refunded')
     and o.created_at >= ? and o.created_at < ? group by ${day}`,
    [org, from, to],
  ));
  const days = pg
    ? `select generate_series(timestamptz '${from}', timestamptz '${to}' - interval '1 day', interval '1 day') as d`
    : `with recursive s(d) as (select '${from.slice(0, 10)}' union all select date(d, '+1 day') from s where d < date('${to.slice(0, 10)}', '-1 day')) select d from s`;
  const end = pg ? `coalesce(s.ended_at, s.ends_at)` : `substr(coalesce(s.ended_at, s.ends_at), 1, 10)`;
  const startDay = pg ? `date_trunc('day', s.started_at at time zone 'UTC')` : `substr(s.started_at, 1, 10)`;
  const active = rows(await db.raw(
    `with days as (${days}), starts as (select ${startDay} as d, count(*) as n,
        sum(case s.recurring_interval when 'year' then round(s.amount / 12.0) else s.amount end) as mrr
      from subscriptions s where s.organization_id = ? group by 1),
      ends as (select ${pg ? `date_trunc('day', ${end} at time zone 'UTC')` : end} as d, count(*) as n,
        sum(case s.recurring_interval when 'year' then round(s.amount / 12.0) else s.amount end) as mrr
      from subscriptions s where s.organization_id = ? and ${end} is not null group by 1)
     select days.d, (select coalesce(sum(n), 0) from starts where starts.d <= days.d) - (select coalesce(sum(n), 0) from ends where ends.d <= days.d) as active,
       (select coalesce(sum(mrr), 0) from starts where starts.d <= days.d) - (select coalesce(sum(mrr), 0) from ends where ends.d <= days.d) as mrr
     from days`,
    [org, org],
  ));
  return { orders: orders.length, days: active.length };
}

async function measure(label, db, pg, { orders, subscriptions, runs }, root) {
  const { migrateToLatest } = await import(join(root, 'dist/core/db/migrate.js'));
  const { getMetrics } = await import(join(root, 'dist/core/metrics/service.js'));
  const { rebuildMetricsRollups } = await import(join(root, 'dist/core/metrics/rollups.js'));
  await migrateToLatest(db);
  const start = Date.UTC(2025, 0, 1);
  const seeded = performance.now();
  const org = await seed(db, { orders, subscriptions, start });
  const seedMs = performance.now() - seeded;
  const rebuilding = performance.now();
  await db.transaction((trx) => rebuildMetricsRollups(trx, [org]));
  const rebuildMs = performance.now() - rebuilding;
  await db.raw('analyze');
  const request = { organizationIds: [org], startDate: '2025-01-01', endDate: '2025-12-31', interval: 'day', timezone: 'UTC' };
  const till = [];
  const hand = [];
  let answer;
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    answer = await getMetrics(db, request);
    till.push(performance.now() - t);
    t = performance.now();
    // The same settings Till reads its metrics with on PostgreSQL (JIT off, sorts in memory), so the ratio is the queries'.
    if (pg) {
      await db.transaction(async (trx) => {
        await trx.raw('set local jit = off');
        await trx.raw(`set local work_mem = '64MB'`);
        await handWritten(trx, pg, org, '2025-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
      });
    } else await handWritten(db, pg, org, '2025-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
    hand.push(performance.now() - t);
  }
  // The same answer computed from the rows (the reading before the rollups, and their reference).
  const rows = [];
  let fromRows;
  for (let i = 0; i < Math.max(3, Math.floor(runs / 2)); i++) {
    const t = performance.now();
    fromRows = await getMetrics(db, request, { rollups: false });
    rows.push(performance.now() - t);
  }
  const same = JSON.stringify(fromRows) === JSON.stringify(answer);
  const paris = [];
  for (let i = 0; i < Math.max(3, Math.floor(runs / 2)); i++) {
    const t = performance.now();
    await getMetrics(db, { ...request, timezone: 'Europe/Paris' });
    paris.push(performance.now() - t);
  }
  return { label, seedMs, rebuildMs, same, till: median(till), rows: median(rows), hand: median(hand), paris: median(paris), periods: answer.periods.length, orders: answer.totals.orders };
}

export async function benchMetrics({ root, quick = false }) {
  const { createDatabase } = await import(join(root, 'dist/core/db/database.js'));
  const sizes = { orders: quick ? 20_000 : 100_000, subscriptions: quick ? 2_000 : 10_000, runs: quick ? 3 : 7 };
  const results = [];
  const dir = mkdtempSync(join(tmpdir(), 'till-bench-metrics-'));
  const sqlite = createDatabase({ client: 'sqlite', filename: join(dir, 'till.sqlite') });
  try {
    results.push(await measure('SQLite', sqlite, false, sizes, root));
  } finally {
    await sqlite.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  const adminUrl = process.env.TILL_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = createDatabase({ client: 'postgres', connectionString: adminUrl });
  const name = `till_bench_metrics_${Date.now()}`;
  let pgNote = '';
  try {
    await admin.raw(`create database ${name}`);
    const pg = createDatabase({ client: 'postgres', connectionString: adminUrl.replace(/\/[^/]*$/, `/${name}`) });
    try {
      results.push(await measure('PostgreSQL', pg, true, sizes, root));
    } finally {
      await pg.destroy();
      await admin.raw(`drop database if exists ${name}`);
    }
  } catch (error) {
    pgNote = `\nPostgreSQL was skipped: ${error.message}\n`;
  } finally {
    await admin.destroy();
  }
  const load = loadavg().map((x) => x.toFixed(2)).join(' ');
  const verdict = (ms) => (ms < 100 ? 'met' : '**missed**');
  const rows = results
    .map((r) => `| ${r.label} | ${r.periods} days, ${r.orders.toLocaleString('en-US')} orders counted | ${fmt(r.till)} | ${fmt(r.paris)} | ${fmt(r.rows)} | ${fmt(r.hand)} | ${(r.till / r.hand).toFixed(2)} | ${r.same ? 'yes' : '**no**'} | ${verdict(Math.max(r.till, r.paris))} |`)
    .join('\n');
  const rebuilds = results.map((r) => `${r.label} ${(r.rebuildMs / 1000).toFixed(1)} s`).join(', ');
  return `## Metrics (issue 20): a year by day

${sizes.orders.toLocaleString('en-US')} paid orders over 2025 and ${sizes.subscriptions.toLocaleString('en-US')} subscriptions (a fifth of them ended), one
organization; \`getMetrics\` (everything \`GET /v1/metrics\` computes: every metric of 365 days and the totals) against
hand-written SQL of part of the same figures (paid orders, revenue and net revenue per UTC day, active subscriptions
and MRR per day from start/end counts), median of ${sizes.runs} runs each, in the same process. Target: under 100 ms
at 100,000 orders and 10,000 subscriptions${quick ? ' (this was a --quick run, at a fifth of that size)' : ''}.
${cpus().length} cores, load average ${load} while measuring (the machine is shared: figures move with the load).

How Till reads it (core/metrics/rollup-series.ts, migrations 0050-0051): from hourly rollups of the orders, checkouts and
subscription changes, which every write of those keeps in its own transaction (docs/metrics.md, "Rollups"): a day's
figures are the sums of its hours, the state metrics (active subscriptions, MRR…) running sums of the hours before
the day's end. The seed inserts rows directly, so the rollups are then built by the migration's backfill
(${rebuilds}). "From the rows" is the same answer computed without the rollups (core/metrics/repository.ts,
the reading before them, still used for the requests the rollups cannot answer: a customer, product or billing-type
filter, a week, month or year interval, a zone off the whole hour); "same" says whether both answers were identical.

| Database | Answer | Till, UTC | Till, Europe/Paris | From the rows, UTC | Hand-written SQL | Till / SQL | Same | < 100 ms |
|---|---|---|---|---|---|---|---|---|
${rows}
${pgNote}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = new URL('..', import.meta.url).pathname;
  const section = await benchMetrics({ root, quick: process.argv.includes('--quick') });
  console.log(section);
  const path = join(root, 'docs/performance.md');
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const at = current.indexOf('## Metrics (issue 20)');
  const next = at >= 0 ? current.indexOf('\n## ', at + 1) : -1;
  const updated = at >= 0 ? `${current.slice(0, at)}${section}${next >= 0 ? current.slice(next) : ''}` : `${current.trimEnd()}\n\n${section}`;
  writeFileSync(path, updated);
}
