import knex, { type Knex } from 'knex';
import { setImmediate } from 'node:timers';
import { nextTurn } from '../loop.js';
import { closeSqliteReader, enableSqliteReader } from './reader.js';

/** Where the data lives: an embedded SQLite file, or a PostgreSQL server. */
export type DatabaseConfig =
  | { client: 'sqlite'; filename: string }
  | { client: 'postgres'; connectionString: string };

export type Database = Knex;
export type Dialect = DatabaseConfig['client'];

const SQLITE_BUSY_TIMEOUT_MS = 5000;

/** Reads a database URL: `postgres://…` or `postgresql://…` for PostgreSQL, anything else is a SQLite path. */
export function parseDatabaseUrl(url: string): DatabaseConfig {
  if (/^postgres(ql)?:\/\//.test(url)) return { client: 'postgres', connectionString: url };
  return { client: 'sqlite', filename: url.replace(/^sqlite:(\/\/)?/, '') };
}

/**
 * Opens a knex pool on the configured database, with SQLite set to WAL, foreign keys on and a busy timeout. SQLite
 * runs on better-sqlite3, the faster of the two drivers measured (docs/performance.md).
 */
export function createDatabase(config: DatabaseConfig): Database {
  if (config.client === 'postgres') {
    return knex({
      client: 'pg',
      connection: config.connectionString,
      pool: { min: 0, max: 10 },
    });
  }
  const db = knex({
    client: 'better-sqlite3',
    connection: { filename: config.filename },
    useNullAsDefault: true,
    // One connection: SQLite serializes writers anyway, and a single connection keeps
    // transactions from waiting on each other's locks inside one process.
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: SqliteConnection, done: (err: Error | null, conn: unknown) => void) => {
        try {
          for (const pragma of SQLITE_PRAGMAS) conn.pragma(pragma);
          cacheStatements(conn);
          done(null, conn);
        } catch (err) {
          done(err as Error, conn);
        }
      },
    },
  });
  yieldBetweenStatements(db.client);
  firstLimitWrittenIn(db);
  enableSqliteReader(db.client, { filename: config.filename, pragmas: SQLITE_READER_PRAGMAS, prepare: cacheStatements });
  // knex's destroy() ends with the client's: the read-only connection closes with the pool.
  const client = db.client as { destroy(callback?: unknown): Promise<void> };
  const destroy = client.destroy.bind(client);
  client.destroy = (callback?: unknown) => {
    closeSqliteReader(db.client);
    return destroy(callback);
  };
  return db;
}

const LITERAL_LIMIT = Symbol('till.firstLimitWrittenIn');

/**
 * SQLite runs `… limit ?` bound to 1 two to three times slower than the same statement with `limit 1` written in
 * (31-36 µs against 11-16 µs for a product by primary key, the same plan; docs/performance.md, "Reads"), and knex
 * binds the limit of every `.first()`. On SQLite a limit of 1 (a first) is written into the SQL; other limits (pages)
 * stay bound, so the statement cache keeps one statement a query shape (compiledRead, core/db/compiled-read.ts, also
 * writes in the other constant limits of its reads). Patched on the query compiler's prototype,
 * which every SQLite query compiles with.
 */
function firstLimitWrittenIn(db: Knex) {
  const prototype = Object.getPrototypeOf(db.client.queryCompiler(db.queryBuilder())) as { limit(this: { single: { limit?: unknown; skipBinding?: Record<string, boolean> } }): string; [LITERAL_LIMIT]?: true };
  if (prototype[LITERAL_LIMIT]) return;
  const limit = prototype.limit;
  prototype[LITERAL_LIMIT] = true;
  prototype.limit = function () {
    if (this.single.limit === 1) this.single.skipBinding = { ...this.single.skipBinding, limit: true };
    return limit.call(this);
  };
}

const SQLITE_PRAGMAS = [
  'journal_mode = WAL',
  'foreign_keys = ON',
  `busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`,
  'synchronous = NORMAL',
  // A 64 MiB page cache and the file memory-mapped (up to 256 MiB): reads that jump around a large table (one
  // customer's events among a million) run three times faster than through SQLite's default 2 MB cache.
  'cache_size = -65536',
  'mmap_size = 268435456',
];

/** The read-only connection's settings: the same caches; a short wait should a checkpoint hold the file. */
const SQLITE_READER_PRAGMAS = [`busy_timeout = 100`, 'cache_size = -65536', 'mmap_size = 268435456'];

/**
 * How long SQLite work may hold the event loop before the next statement waits for the loop to turn, in ms. 4 left
 * tilld's loop delay at p99 17.5-18.5 ms under the ingest benchmark, 2 at 14.1-14.5 ms (two alternating pairs of
 * 12 s SQLite runs, 23:26-23:30 on 2026-11-26), ingesting as many events a second.
 */
export const SQLITE_SLICE_MS = 2;
let sliceStartedAt = -1;
const sliceEnded = () => {
  sliceStartedAt = -1;
};
const YIELDING = Symbol('till.yieldBetweenStatements');

/**
 * better-sqlite3 runs a statement synchronously and knex resolves one query after the next in microtasks, so a
 * transaction, and the queue of requests waiting for the one connection behind it, ran to the end without the event
 * loop getting a turn: under ingest `GET /healthz` waited seconds (docs/performance.md, "Latency under ingest").
 * Before each statement, once SQLite work has held the loop for SQLITE_SLICE_MS, it waits for the loop to turn
 * (setImmediate: pending I/O, timers and other requests run first). The connection stays with whoever holds it.
 * Patched on the client's prototype: knex builds a transaction's client from the prototype, not the instance.
 */
function yieldBetweenStatements(client: Knex.Client) {
  const prototype = Object.getPrototypeOf(client) as { _query(connection: unknown, obj: unknown): Promise<unknown>; [YIELDING]?: true };
  if (prototype[YIELDING]) return;
  const run = prototype._query;
  prototype[YIELDING] = true;
  prototype._query = async function (this: unknown, connection: unknown, obj: unknown) {
    const turn = sqliteSliceSpent();
    if (turn) await turn;
    return run.call(this, connection, obj);
  };
}

/**
 * SQLite work's share of the current turn of the event loop: undefined while it is under SQLITE_SLICE_MS (the
 * caller goes on at once; awaiting undefined would still cost a microtask turn), else a promise of the next turn,
 * after which a new slice begins. Statements run through knex check it before each one; code running many
 * statements in one call (runEachRowPrepared) checks it between them.
 */
export function sqliteSliceSpent(): Promise<void> | undefined {
  const now = performance.now();
  if (sliceStartedAt < 0) {
    sliceStartedAt = now;
    setImmediate(sliceEnded);
    return undefined;
  }
  if (now - sliceStartedAt < SQLITE_SLICE_MS) return undefined;
  return nextTurn().then(() => {
    if (sliceStartedAt < 0) {
      sliceStartedAt = performance.now();
      setImmediate(sliceEnded);
    }
  });
}

interface SqliteStatement {
  /** True while an iterate() over it is open: such a statement cannot run again until the iteration ends. */
  readonly busy: boolean;
}
interface SqliteConnection {
  pragma(sql: string): unknown;
  prepare(sql: string): SqliteStatement;
}

/** Statements kept per connection; past this, the least recently used is dropped (SQL text with inlined values). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * knex asks better-sqlite3 to prepare every query anew, and SQLite's parsing and planning was the largest single cost
 * of a read (docs/performance.md, "Reads"): the connection keeps its prepared statements by SQL text instead. A
 * statement is reset after every run, its bindings are given per run and knex never changes its modes, so reusing
 * one is the same as preparing it again; one busy with an open iteration is never handed out (a fresh one is).
 * SQLite re-prepares a cached statement by itself when the schema changes under it (migrations).
 */
export function cacheStatements(conn: SqliteConnection): void {
  const prepare = conn.prepare.bind(conn);
  const cache = new Map<string, SqliteStatement>();
  conn.prepare = (sql: string) => {
    const cached = cache.get(sql);
    if (cached && !cached.busy) {
      // Map keeps insertion order: moving the entry to the end makes the first one the least recently used.
      cache.delete(sql);
      cache.set(sql, cached);
      return cached;
    }
    const statement = prepare(sql);
    if (!cached) {
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(sql, statement);
    }
    return statement;
  };
}

export function dialectOf(db: Executor): Dialect {
  const client = db.client.config.client as string;
  return client === 'pg' || client === 'postgres' ? 'postgres' : 'sqlite';
}

/** True when the database answers a trivial query. */
export async function isDatabaseReady(db: Database): Promise<boolean> {
  try {
    await db.raw('select 1');
    return true;
  } catch {
    return false;
  }
}

/** Anything a query can run on: the database or a transaction in it. */
export type Executor = Knex | Knex.Transaction;
