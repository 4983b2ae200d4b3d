import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Packages esbuild must leave to Node: native addons (the SQLite drivers), pdfkit (it reads its font files from
 * beside its own sources; it is imported lazily, for invoice PDFs only), and drivers knex can load for databases
 * Till does not use, which are not installed.
 */
const UNBUNDLED = ['better-sqlite3', 'sqlite3', 'pdfkit', 'mysql', 'mysql2', 'mariadb', 'oracledb', 'tedious'];

/**
 * This checkout's daemon, bundled into a directory of the test's own: what `bin/tilld` runs, built from the sources
 * as they are now rather than read from a shared dist/ that another build may be rewriting. Packages are bundled
 * too (except UNBUNDLED), and code behind dynamic imports goes to chunks loaded on first use: Node then reads and
 * compiles a few files instead of resolving some 1,400 package modules, so tilld answers /healthz in about 0.3 s instead of
 * 0.6 s (measured on a quiet 2-core machine), which a test that restarts it 100 times needs.
 */
export async function buildTilld(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'till-tilld-'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  const entry = join(dir, 'entry.ts');
  writeFileSync(entry, `import { main } from ${JSON.stringify(join(ROOT, 'daemon/main.ts'))};\nprocess.exitCode = await main(process.argv.slice(2), process.env);\n`);
  await build({
    entryPoints: { tilld: entry },
    outdir: join(dir, 'lib'),
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: UNBUNDLED,
    // CommonJS packages inside an ES module bundle still call require() for Node's built-ins.
    banner: { js: "import { createRequire as __tillCreateRequire } from 'node:module'; const require = __tillCreateRequire(import.meta.url);" },
    // Less text to read and parse at every start; names stay as written, so stack traces still read.
    minifyWhitespace: true,
    minifySyntax: true,
    jsx: 'automatic',
    logLevel: 'error',
  });
  return join(dir, 'lib', 'tilld.mjs');
}

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

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

/** Starts the daemon `buildTilld` made as a child process and resolves once /healthz answers. */
export async function spawnTilld(bin: string, env: Record<string, string>, options: { port?: number; timeoutMs?: number } = {}): Promise<SpawnedDaemon> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [bin], {
    env: { PATH: process.env.PATH ?? '', TILL_HOST: '127.0.0.1', TILL_PORT: String(port), TILL_RATE_LIMIT: 'off', TILL_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
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
  return { url, child, output: () => output, kill: () => signal('SIGKILL'), stop: () => signal('SIGTERM') };
}
