import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Packages esbuild must leave to Node: the native SQLite driver, pdfkit (it reads its font files from beside its own
 * sources; it is imported lazily, for invoice PDFs only), and drivers knex can load for clients Till does not use
 * (sqlite3 among them), which are not installed.
 */
const UNBUNDLED = ['better-sqlite3', 'pdfkit', 'sqlite3', 'mysql', 'mysql2', 'mariadb', 'oracledb', 'tedious'];

/**
 * Runs the bundle (CommonJS) through vm.Script with V8's code cache kept beside it: a start then skips compiling
 * what earlier starts compiled. The cache is written as the process exits when there was none (buildTilld stops a
 * first daemon gracefully), and V8 ignores a cache that does not match the file or the Node version. It is written on
 * 'exit' rather than on SIGTERM: a SIGTERM listener of the loader's own would keep a signal that arrives before
 * tilld listens for it from ending the process, and the test waiting for that process would wait forever.
 */
const LOADER = `'use strict';
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');
const file = path.join(__dirname, 'tilld.cjs');
const cacheFile = file + '.v8-cache';
let cachedData;
try {
  cachedData = fs.readFileSync(cacheFile);
} catch {}
const script = new vm.Script(Module.wrap(fs.readFileSync(file, 'utf8')), { filename: file, cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
if (!cachedData || script.cachedDataRejected) {
  process.once('exit', () => {
    const temp = cacheFile + '.' + process.pid;
    try {
      fs.writeFileSync(temp, script.createCachedData());
      fs.renameSync(temp, cacheFile);
    } catch {
      // no cache: later starts compile as this one did
    }
  });
}
const mod = { exports: {}, filename: file, id: file, loaded: false };
script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(file), mod, file, __dirname);
`;

/**
 * This checkout's daemon, bundled into a directory of the test's own: what `bin/tilld` runs, built from the sources
 * as they are now rather than read from a shared dist/ that another build may be rewriting. Packages are bundled too
 * (except UNBUNDLED), so Node reads one file instead of resolving some 1,400 package modules, and the bundle runs with
 * V8's code cache (LOADER). tilld then answers /healthz about 0.25 s after it is started instead of 0.6 s (medians on
 * the 2-core test machine), which a test that restarts it 100 times needs. Resolves with the path to run with node.
 */
export async function buildTilld(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'till-tilld-'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  const entry = join(dir, 'entry.ts');
  writeFileSync(entry, `import { main } from ${JSON.stringify(join(ROOT, 'daemon/main.ts'))};\nvoid main(process.argv.slice(2), process.env).then((code) => { process.exitCode = code; });\n`);
  await build({
    entryPoints: [entry],
    outfile: join(dir, 'lib', 'tilld.cjs'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    external: UNBUNDLED,
    // Our sources read import.meta.url (core/version.ts finds package.json from it): the bundle's own URL.
    define: { 'import.meta.url': '__tillImportMetaUrl' },
    banner: { js: "const __tillImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    // Less text to read at every start; names stay as written, so stack traces still read.
    minifyWhitespace: true,
    minifySyntax: true,
    jsx: 'automatic',
    logLevel: 'error',
  });
  // The webhook sending thread's module, beside the bundle where core/webhooks/send-run.ts looks for it.
  await build({
    entryPoints: [join(ROOT, 'core/webhooks/send-run.ts')],
    outfile: join(dir, 'lib', 'send-run.js'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: UNBUNDLED,
    logLevel: 'error',
  });
  const bin = join(dir, 'lib', 'start.cjs');
  writeFileSync(bin, LOADER);
  // A first start and graceful stop writes the code cache the later starts use.
  const dataDir = mkdtempSync(join(tmpdir(), 'till-tilld-warm-'));
  try {
    const daemon = await spawnTilld(bin, { TILL_DATA_DIR: dataDir, TILL_SECRET: 'warm-up-secret-warm-up-secret-warm-up-0123' }, { timeoutMs: 120_000 });
    await daemon.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return bin;
}

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** How long a graceful stop may take (tilld's own grace for open connections is 10 s). */
const STOP_TIMEOUT_MS = 60_000;

export interface SpawnedDaemon {
  url: string;
  child: ChildProcess;
  /** Output so far (stderr and stdout), for failure messages. */
  output: () => string;
  /** SIGKILL: no shutdown code runs. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM, the graceful stop. */
  stop(): Promise<void>;
}

/**
 * Starts the daemon `buildTilld` made as a child process and resolves once /healthz answers. Like startTestDaemon,
 * without Stripe's keys it is a sandbox-only server (TILL_SANDBOX_ONLY) unless `env` says otherwise.
 */
export async function spawnTilld(bin: string, env: Record<string, string>, options: { port?: number; timeoutMs?: number } = {}): Promise<SpawnedDaemon> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [bin], {
    env: { PATH: process.env.PATH ?? '', TILL_HOST: '127.0.0.1', TILL_PORT: String(port), TILL_RATE_LIMIT: 'off', TILL_LOG_LEVEL: 'warn', ...(env.TILL_STRIPE_SECRET_KEY ? {} : { TILL_SANDBOX_ONLY: '1' }), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`tilld exited with ${child.exitCode}: ${output}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`tilld did not answer /healthz in time: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  // A graceful stop that does not end is a bug to report with what tilld printed, not a test left waiting for ever.
  const stop = async () => {
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<'stuck'>((resolve) => (timer = setTimeout(() => resolve('stuck'), STOP_TIMEOUT_MS)));
    const ended = await Promise.race([signal('SIGTERM'), stuck]);
    clearTimeout(timer);
    if (ended === 'stuck') {
      await signal('SIGKILL');
      throw new Error(`tilld did not stop within ${STOP_TIMEOUT_MS / 1000} s of SIGTERM: ${output}`);
    }
  };
  return { url, child, output: () => output, kill: () => signal('SIGKILL'), stop };
}
