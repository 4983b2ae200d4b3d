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
      afterCreate: (conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) => {
        try {
          for (const pragma of SQLITE_PRAGMAS) conn.pragma(pragma);
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
