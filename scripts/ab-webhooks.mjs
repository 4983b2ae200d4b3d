// A/B of webhook delivery throughput: tilld of several build roots started side by side (each on its own database),
// then, round after round and in alternating order, each gets a fresh organization and endpoints and delivers
// `--events` events committed at once to one endpoint and `--ten-events` to each of ten, so the machine's load falls
// on all alike. `node scripts/ab-webhooks.mjs --roots=A,B [--db=postgres|sqlite] [--rounds=N] [--events=2000]
// [--ten-events=500] [--latency=N]`. Prints each run and, per root, the median deliveries/s, tilld's CPU a delivery
// and, on PostgreSQL, the CPU a delivery of the server processes serving that daemon's database (read from /proc).
// --latency=N also times N events committed one at a time, as the bench's commit → delivered.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import knex from 'knex';
import { postgresDatabase, startTilld } from './bench-daemon.mjs';
import { latency, seed, startReceiver, throughput } from './bench-webhooks.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const roots = arg('roots').split(',');
const dialect = arg('db', 'postgres');
const rounds = Number(arg('rounds', 4));
const events = Number(arg('events', 2000));
const tenEvents = Number(arg('ten-events', 500));
const latencyEvents = Number(arg('latency', 0));
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};
const pgUrl = process.env.TILL_BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const admin = dialect === 'postgres' ? knex({ client: 'pg', connection: pgUrl, pool: { min: 0, max: 1 } }) : undefined;
/** CPU time so far of each server process serving the database (pid -> ms); a process that ended takes its last part along. */
async function databaseCpu(database) {
  const cpu = new Map();
  if (!admin || !database) return cpu;
  const name = new URL(database.url).pathname.slice(1);
  const { rows } = await admin.raw('select pid from pg_stat_activity where datname = ?', [name]);
  for (const { pid } of rows) {
    try {
      cpu.set(pid, cpuMs(pid));
    } catch {}
  }
  return cpu;
}
const databaseCpuSince = async (database, before) => {
  let total = 0;
  for (const [pid, ms] of await databaseCpu(database)) total += ms - (before.get(pid) ?? 0);
  return total;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const receiver = await startReceiver();
const daemons = [];
try {
  for (const root of roots) {
    const database = dialect === 'postgres' ? await postgresDatabase(pgUrl, 'till_ab_webhooks') : undefined;
    const daemon = await startTilld(root, { env: { TILL_LOG_LEVEL: 'warn', TILL_RATE_LIMIT: 'off', TILL_WEBHOOKS_ALLOW_PRIVATE: '1', ...database?.env } });
    const dbConfig = database ? { client: 'postgres', connectionString: database.url } : { client: 'sqlite', filename: join(daemon.dataDir, 'till.sqlite') };
    daemons.push({ root, daemon, database, dbConfig, runs: { one: [], ten: [], latency: [] } });
  }
  console.log(`load at start: ${loadavg().map((x) => x.toFixed(2)).join(', ')}`);
  for (let round = 0; round < rounds; round++) {
    for (const d of latencyEvents ? (round % 2 ? [...daemons].reverse() : daemons) : []) {
      const lat = await latency(d.daemon.url, await seed(d.daemon.url), receiver, latencyEvents, `/r${round}-${d.daemon.child.pid}-latency`);
      d.runs.latency.push(lat);
      console.log(`round ${round} latency ${d.root}: p50 ${lat.p50.toFixed(1)} ms, p90 ${lat.p90.toFixed(1)} ms, p99 ${lat.p99.toFixed(1)} ms (load ${loadavg()[0].toFixed(2)})`);
    }
    for (const [what, endpoints, count] of [['one', 1, events], ['ten', 10, tenEvents]]) {
      for (const d of round % 2 ? [...daemons].reverse() : daemons) {
        const seeded = await seed(d.daemon.url);
        const cpuBefore = cpuMs(d.daemon.child.pid);
        const dbBefore = await databaseCpu(d.database);
        const r = await throughput(d.root, d.daemon.url, seeded, receiver, d.dbConfig, endpoints, count, `r${round}-${d.daemon.child.pid}-${what}`);
        const cpu = ((cpuMs(d.daemon.child.pid) - cpuBefore) * 1000) / r.delivered;
        const db = ((await databaseCpuSince(d.database, dbBefore)) * 1000) / r.delivered;
        if (!r.inOrder || !r.complete) throw new Error(`${d.root} ${what}: in order ${r.inOrder}, complete ${r.complete}`);
        d.runs[what].push({ rate: r.rate, cpu, db });
        console.log(`round ${round} ${what} ${d.root}: ${Math.round(r.rate)}/s, tilld ${Math.round(cpu)} µs, postgres ${Math.round(db)} µs a delivery (load ${loadavg()[0].toFixed(2)})`);
      }
    }
  }
  console.log(`load at end: ${loadavg().map((x) => x.toFixed(2)).join(', ')}`);
  for (const d of daemons) {
    if (latencyEvents) console.log(`${d.root} latency: median p50 ${median(d.runs.latency.map((r) => r.p50)).toFixed(1)} ms, p99 ${median(d.runs.latency.map((r) => r.p99)).toFixed(1)} ms`);
    for (const what of ['one', 'ten']) {
      const runs = d.runs[what];
      console.log(`${d.root} ${what}: median ${Math.round(median(runs.map((r) => r.rate)))}/s, tilld ${Math.round(median(runs.map((r) => r.cpu)))} µs, postgres ${Math.round(median(runs.map((r) => r.db)))} µs a delivery`);
    }
  }
} finally {
  for (const d of daemons) {
    await d.daemon.stop();
    await d.database?.drop();
  }
  await receiver.close();
  await admin?.destroy();
}
