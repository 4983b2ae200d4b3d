// A/B of the reads bench's CPU a request: tilld of several build roots started side by side on the same database
// kind, each seeded alike, then read in alternating short autocannon bursts (100 connections) so the machine's
// load falls on all alike. `node scripts/ab-reads.mjs --roots=A,B [--db=sqlite|postgres] [--rounds=N] [--seconds=S]`.
// Prints, per root and read, the server CPU a request (median of the rounds) and requests/s, and on PostgreSQL the
// CPU a request of the database server's processes serving that daemon's database.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import knex from 'knex';
import { json, postgresDatabase, startTilld } from './bench-daemon.mjs';
import { seed } from './bench-reads.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const roots = arg('roots').split(',');
const dialect = arg('db', 'sqlite');
const rounds = Number(arg('rounds', 4));
const seconds = Number(arg('seconds', 3));
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};
const pgUrl = process.env.TILL_BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
const pgUrls = arg('postgres-urls')?.split(',') ?? roots.map(() => pgUrl);
const admin = dialect === 'postgres' ? knex({ client: 'pg', connection: pgUrl, pool: { min: 0, max: 1 } }) : undefined;
/** On PostgreSQL, the CPU time so far of the server processes serving this daemon's database (it runs on the same machine). */
async function databaseCpuMs(database) {
  if (!admin || !database) return 0;
  const name = new URL(database.env.TILL_DATABASE_URL).pathname.slice(1);
  const { rows } = await admin.raw('select pid from pg_stat_activity where datname = ?', [name]);
  let total = 0;
  for (const { pid } of rows) {
    try {
      total += cpuMs(pid);
    } catch {}
  }
  return total;
}
const daemons = [];
try {
  for (const [i, root] of roots.entries()) {
    const database = dialect === 'postgres' ? await postgresDatabase(pgUrls[i], 'till_ab_reads') : undefined;
    const daemon = await startTilld(root, { env: database?.env });
    const seeded = await seed(daemon.url);
    daemons.push({ root: dialect === 'postgres' && arg('postgres-urls') ? `${root} (${pgUrls[i]})` : root, daemon, database, seeded, figures: {} });
  }
  await new Promise((resolve) => setTimeout(resolve, Number(arg('settle', 0)) * 1000));
  console.log(`load at start: ${loadavg().map((x) => x.toFixed(2)).join(', ')}`);
  for (let round = 0; round < rounds; round++) {
    for (const read of ['product', 'state']) {
      for (const d of round % 2 ? [...daemons].reverse() : daemons) {
        const path = read === 'product' ? `/v1/products/${d.seeded.productId}` : `/v1/customers/${d.seeded.customerId}/state`;
        const url = `${d.daemon.url}${path}`;
        await autocannon({ url, connections: 100, duration: 1, headers: { authorization: `Bearer ${d.seeded.token}` } });
        const before = cpuMs(d.daemon.child.pid);
        const databaseBefore = await databaseCpuMs(d.database);
        const result = await autocannon({ url, connections: 100, duration: seconds, headers: { authorization: `Bearer ${d.seeded.token}` } });
        const cpu = cpuMs(d.daemon.child.pid) - before;
        const databaseCpu = (await databaseCpuMs(d.database)) - databaseBefore;
        if (result.non2xx) throw new Error(`${url}: non-2xx answers`);
        (d.figures[read] ??= []).push({ cpu: (cpu * 1000) / result.requests.total, db: (databaseCpu * 1000) / result.requests.total, rps: result.requests.average });
      }
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const d of daemons) {
    for (const [read, runs] of Object.entries(d.figures)) {
      console.log(`${d.root} ${dialect} ${read}: CPU a request median ${Math.round(median(runs.map((r) => r.cpu)))} µs (${runs.map((r) => Math.round(r.cpu)).join(' ')}), req/s median ${Math.round(median(runs.map((r) => r.rps)))}${admin ? `, PostgreSQL's CPU a request median ${Math.round(median(runs.map((r) => r.db)))} µs` : ''}`);
    }
  }
  console.log(`load at end: ${loadavg().map((x) => x.toFixed(2)).join(', ')}`);
} finally {
  for (const d of daemons) {
    await d.daemon.stop();
    await d.database?.drop();
  }
  await admin?.destroy();
}
