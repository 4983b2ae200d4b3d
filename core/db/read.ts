import type { Knex } from 'knex';
import { sqliteReader } from './reader.js';

interface SqliteStatement {
  all(values: unknown[]): unknown[];
}
export interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}
/** The parts of knex's pool (tarn) read here: counts, and the idle connection itself. */
interface Pool {
  numUsed(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
  numPendingValidations(): number;
  free?: { resource?: SqliteConnection }[];
}
export interface SqliteClient {
  config: { client?: unknown };
  transacting?: boolean;
  pool?: Pool;
  _formatBindings?(bindings: readonly unknown[]): unknown[];
}

/**
 * The one SQLite connection, when nobody holds it (no query in flight, no transaction open on it) and nobody waits
 * for it. A statement run on it synchronously, before anything else can get a turn, is then exactly what knex would
 * have done after acquiring it, without the acquiring.
 */
function idleConnection(client: SqliteClient): SqliteConnection | undefined {
  if (client.transacting || client.config.client !== 'better-sqlite3') return undefined;
  const pool = client.pool;
  if (!pool || !Array.isArray(pool.free) || pool.free.length !== 1) return undefined;
  if (pool.numUsed() !== 0 || pool.numPendingAcquires() !== 0 || pool.numPendingCreates() !== 0 || pool.numPendingValidations() !== 0) return undefined;
  return pool.free[0]!.resource;
}

/** The read-only connection, for a read outside any transaction while the pool's connection is taken. */
function busyReader(client: SqliteClient): SqliteConnection | undefined {
  if (client.transacting || client.config.client !== 'better-sqlite3') return undefined;
  return sqliteReader(client);
}

/**
 * Runs a select (or a `.first()`) built with knex, as awaiting the builder would, answering the same rows. On SQLite
 * outside a transaction it runs the compiled statement straight on a connection (prepared once: connections cache
 * statements): the pool's one connection when it is idle — knex's runner costs more than the query itself on the
 * hot reads (acquiring the connection through the pool sets two timers and a dozen promises per query;
 * docs/performance.md, "Reads") — and the read-only connection (core/db/reader.ts) when it is held or awaited, so
 * the read does not queue behind the writes (it sees the last commit, as it would have after waiting). Anywhere
 * else — PostgreSQL, in a transaction — it awaits the builder.
 */
export async function read<T>(query: Knex.QueryBuilder): Promise<T> {
  const client = clientOf(query);
  const connection = directConnection(client);
  if (connection) {
    const compiled = compiledSelect(query);
    if (compiled) return runOn(connection, client, compiled.sql, compiled.first, compiled.bindings) as T;
  }
  return (await query) as T;
}

/** The knex client a query (or a knex instance, or a transaction) runs on. */
export const clientOf = (executor: Knex | Knex.Transaction | Knex.QueryBuilder) => (executor as unknown as { client: SqliteClient }).client;

/** The SQLite connection read() would run a select on now, outside knex's runner; undefined where it awaits knex. */
export function directConnection(client: SqliteClient): SqliteConnection | undefined {
  return idleConnection(client) ?? busyReader(client);
}

/** A select's (or a first's) native SQL and bindings, or undefined for any other query or one with options. */
export function compiledSelect(query: Knex.QueryBuilder): { sql: string; bindings: unknown[]; first: boolean } | undefined {
  const compiled = query.toSQL() as Knex.Sql & { options?: Record<string, unknown> };
  const method = compiled.method as string;
  if ((method !== 'select' && method !== 'first') || (compiled.options && Object.keys(compiled.options).length > 0)) return undefined;
  const { sql, bindings } = compiled.toNative();
  return { sql, bindings: bindings as unknown[], first: method === 'first' };
}

/** Runs a compiled select on a connection directConnection() gave, answering what awaiting the query would. */
export function runOn(connection: SqliteConnection, client: SqliteClient, sql: string, first: boolean, bindings: unknown[]): unknown {
  const values = client._formatBindings ? client._formatBindings(bindings) : bindings;
  const rows = connection.prepare(sql).all(values);
  return first ? rows[0] : rows;
}
