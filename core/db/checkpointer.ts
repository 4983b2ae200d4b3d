import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { dialectOf, type Database } from './database.js';

/** How often the checkpointing thread looks for WAL frames to copy back (a look that finds none costs next to nothing). */
const CHECKPOINT_INTERVAL_MS = 100;
/** The writer's own checkpoint, should the thread fall behind: WAL pages (SQLite's default is 1,000). */
const WRITER_AUTOCHECKPOINT_PAGES = 20_000;

// The thread: its own connection on the file, a PASSIVE checkpoint (copies what it can, never waits for or blocks a
// writer or a reader) every interval. CommonJS, handed the driver's resolved path.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Driver = require(workerData.driver);
const db = new Driver(workerData.filename, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const pass = () => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} };
const timer = setInterval(pass, workerData.intervalMs);
parentPort.on('message', () => { clearInterval(timer); pass(); db.close(); parentPort.postMessage('stopped'); });
parentPort.postMessage('ready');
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * SQLite's WAL checkpoints on a thread of their own. By default the connection whose COMMIT takes the WAL past 1,000
 * pages copies them back into the database file and syncs it, inside that COMMIT, on the event loop: under ingest, a
 * checkpoint took 100-400 ms of the loop a few times a second, and a tenth of the ingest's time (docs/performance.md,
 * "Latency under ingest", "Meter quantities at scale"). The thread checkpoints every 100 ms on the other core; the
 * writer keeps a checkpoint of its own only past 20,000 pages, should the thread fall behind. Nothing on PostgreSQL or
 * an in-memory database.
 */
export async function startSqliteCheckpointer(db: Database): Promise<Checkpointer | undefined> {
  if (dialectOf(db) !== 'sqlite') return undefined;
  const filename = String((db.client.config.connection as { filename?: string } | undefined)?.filename ?? '');
  if (filename === ':memory:' || filename === '' || filename.startsWith('file::memory:')) return undefined;
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { driver, filename, intervalMs: CHECKPOINT_INTERVAL_MS } });
  worker.unref();
  let exited = false;
  const ended = new Promise<void>((resolve) => {
    worker.on('error', () => {}); // a thread that cannot open the file ends; the writer then keeps checkpointing itself
    worker.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  // The writer leaves checkpoints to the thread only once the thread has its connection.
  const ready = await Promise.race([new Promise<boolean>((resolve) => worker.once('message', () => resolve(true))), ended.then(() => false)]);
  if (!ready) return undefined;
  await db.raw(`pragma wal_autocheckpoint = ${WRITER_AUTOCHECKPOINT_PAGES}`);
  let stopping: Promise<void> | undefined;
  return {
    stop: () =>
      (stopping ??= (async () => {
        if (!exited) {
          const stopped = new Promise<void>((resolve) => worker.once('message', () => resolve()));
          worker.postMessage('stop');
          await Promise.race([stopped, ended]);
        }
        await worker.terminate();
      })()),
  };
}
