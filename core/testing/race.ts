import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { build } from 'esbuild';
import type { DatabaseConfig } from '../db/database.js';
import type * as Tasks from './race-tasks.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The tasks racers run (core/testing/race-tasks.ts): each gets its own pool to the test database and its input. */
const TASKS = join(ROOT, 'core/testing/race-tasks.ts');
export type RaceTaskName = keyof typeof Tasks;
type Input<T extends RaceTaskName> = Parameters<(typeof Tasks)[T]>[1];
type Output<T extends RaceTaskName> = Awaited<ReturnType<(typeof Tasks)[T]>>;

/**
 * The worker's script: opens its own pool (on SQLite, its own connection to the file, as another process would),
 * makes the connection, says it is ready, waits at the starting gate, then runs the task on it.
 */
const workerSource = (taskName: string) => `
import { parentPort, workerData } from 'node:worker_threads';
import { createDatabase } from ${JSON.stringify(join(ROOT, 'core/db/database.ts'))};
import { ${taskName} as task } from ${JSON.stringify(TASKS)};

const gate = new Int32Array(workerData.gate);
const db = createDatabase(workerData.config);
try {
  await db.raw('select 1');
  parentPort.postMessage({ ready: true });
  Atomics.wait(gate, 0, 0);
  parentPort.postMessage({ result: await task(db, workerData.input) });
} catch (error) {
  parentPort.postMessage({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
} finally {
  await db.destroy();
}
`;

const bundles = new Map<string, Promise<string>>();

/** The task and Till's sources as they are now, bundled once per test file and task (packages stay Node's). */
function bundle(taskName: string): Promise<string> {
  let built = bundles.get(taskName);
  if (!built) {
    built = (async () => {
      const dir = mkdtempSync(join(tmpdir(), 'till-race-'));
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
      const entry = join(dir, 'entry.ts');
      writeFileSync(entry, workerSource(taskName));
      const outfile = join(dir, 'racer.mjs');
      await build({ entryPoints: [entry], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', packages: 'external', logLevel: 'error' });
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      return outfile;
    })();
    bundles.set(taskName, built);
  }
  return built;
}

/**
 * Runs the task once per input, each in a worker thread
 * with its own connection pool to `config`, all released from one starting gate once every connection is open:
 * real separate connections contending for the same rows, as separate daemons would (better-sqlite3 blocks the thread
 * that waits on a lock, so one thread could not hold several waiting connections). Answers the results in input
 * order; rejects with a worker's error.
 */
export async function race<T extends RaceTaskName>(config: DatabaseConfig, taskName: T, inputs: readonly Input<T>[]): Promise<Output<T>[]> {
  type R = Output<T>;
  const file = await bundle(taskName);
  const gate = new SharedArrayBuffer(4);
  let ready = 0;
  let release: () => void;
  const allReady = new Promise<void>((resolve) => (release = resolve));
  const results = inputs.map(
    (input) =>
      new Promise<R>((resolve, reject) => {
        const worker = new Worker(file, { workerData: { config, input, gate } });
        let settled = false;
        worker.on('message', (message: { ready?: true; result?: R; error?: string }) => {
          if (message.ready) {
            if (++ready === inputs.length) release();
          } else if (message.error !== undefined) {
            settled = true;
            reject(new Error(`racer failed: ${message.error}`));
          } else {
            settled = true;
            resolve(message.result as R);
          }
        });
        worker.on('error', (error) => {
          settled = true;
          reject(error);
        });
        worker.on('exit', (code) => {
          if (!settled) reject(new Error(`racer exited with code ${code} before answering`));
        });
      }),
  );
  const all = Promise.all(results);
  try {
    await Promise.race([allReady, all]);
  } finally {
    // Opened even when a worker failed before the gate, so none of the others waits there forever.
    const view = new Int32Array(gate);
    Atomics.store(view, 0, 1);
    Atomics.notify(view, 0);
  }
  return all;
}
