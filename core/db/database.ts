import knex, { type Knex } from 'knex';

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
  return knex({
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
export function cacheStatements(conn: SqliteConnection) {
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
