import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The built daemon, as operators run it (vitest's global setup builds it). */
export const TILLD_BIN = fileURLToPath(new URL('../../bin/tilld', import.meta.url));
const BUILT_WORKER = fileURLToPath(new URL('../../dist/daemon/webhooks/worker.js', import.meta.url));

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

/** Starts `node bin/tilld` as a child process and resolves once /healthz answers. */
export async function spawnTilld(env: Record<string, string>, options: { port?: number; timeoutMs?: number } = {}): Promise<SpawnedDaemon> {
  if (!existsSync(BUILT_WORKER)) throw new Error('dist/ has no webhook worker: run `npm run build` first');
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [TILLD_BIN], {
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
