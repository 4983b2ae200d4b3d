// What the benchmarks that drive a real tilld share: starting a built tilld (bin/tilld, dist/) on a temporary data
// directory and a free port, stopping it, a fresh PostgreSQL database for it, and JSON calls to it. Used by
// bench-reads.mjs and bench-webhooks.mjs.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex from 'knex';

export const wait = (t) => new Promise((resolve) => setTimeout(resolve, t));

/** A port free right now (a daemon is given one, so its stdout can go to /dev/null). */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Waits until `url` answers 2xx; a child that exits or a minute without an answer is an error. */
export async function waitFor(url, child) {
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

/** Ends a child process with SIGTERM and waits for it to exit. */
export const stopChild = async (child) => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
};

const PROBE = new URL('./bench-probe.mjs', import.meta.url).pathname;

/**
 * tilld as it ships (default logging to /dev/null, rate limiting and background work, unless `env` says otherwise)
 * on a temporary data directory. `profileDir`: it runs under `node --cpu-prof`. `probe`: it runs with
 * bench-probe.mjs, and `daemon.probe()` answers its event-loop delay and request times since the last call.
 */
export async function startTilld(root, { env = {}, profileDir, probe = false } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'till-bench-'));
  const port = await freePort();
  const probeFile = join(dataDir, 'probe.json');
  const args = [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...(probe ? [`--import=${PROBE}`] : [])];
  const child = spawn(process.execPath, [...args, join(root, 'bin/tilld')], {
    env: { ...process.env, TILL_PORT: String(port), TILL_HOST: '127.0.0.1', TILL_DATA_DIR: dataDir, ...(probe ? { TILL_BENCH_PROBE: probeFile } : {}), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/readyz`, child);
  /** The probe's figures since the previous call (it writes them to a file on SIGUSR2). */
  const readProbe = async () => {
    rmSync(probeFile, { force: true });
    child.kill('SIGUSR2');
    for (let i = 0; i < 500 && !existsSync(probeFile); i++) await wait(10);
    return JSON.parse(readFileSync(probeFile, 'utf8'));
  };
  return {
    child,
    url,
    dataDir,
    probe: probe ? readProbe : undefined,
    stop: async () => {
      await stopChild(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh PostgreSQL database named `${prefix}_…` on the server of `pgUrl`, with the TILL_DATABASE_URL that points
 * tilld at it and a drop(); undefined when the server does not answer.
 */
export async function postgresDatabase(pgUrl, prefix) {
  const admin = knex({ client: 'pg', connection: pgUrl, pool: { min: 0, max: 1 } });
  try {
    await admin.raw('select 1');
  } catch {
    await admin.destroy();
    return undefined;
  }
  const database = `${prefix}_${randomUUID().slice(0, 8)}`;
  await admin.raw(`create database ${database}`);
  const u = new URL(pgUrl);
  u.pathname = `/${database}`;
  return {
    url: u.toString(),
    env: { TILL_DATABASE_URL: u.toString() },
    drop: async () => {
      await admin.raw(`drop database if exists ${database} with (force)`);
      await admin.destroy();
    },
  };
}

/** A JSON call: the parsed body and the headers; anything but 2xx is an error. */
export async function json(url, init, token) {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', origin: new URL(url).origin, ...(token ? { authorization: `Bearer ${token}` } : {}), ...init?.headers } });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return { body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** A seller signed up with one organization: their session token and the organization's id. */
export async function signUpSeller(url) {
  const signUp = await json(`${url}/api/auth/sign-up/email`, { method: 'POST', body: JSON.stringify({ name: 'Bench', email: `bench-${randomUUID()}@example.com`, password: 'bench-password-123' }) });
  const session = signUp.headers.get('set-auth-token');
  const organizationId = (await json(`${url}/api/auth/organization/create`, { method: 'POST', body: JSON.stringify({ name: 'Bench', slug: `bench-${randomUUID().slice(0, 8)}` }) }, session)).body.id;
  return { session, organizationId };
}
