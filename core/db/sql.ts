import type { Knex } from 'knex';
import { sqliteSliceSpent, type Executor } from './database.js';
import { pipelinedRows, type PipelineHost } from './pipeline.js';

/**
 * Rows in one multi-row INSERT: knex writes one on SQLite as a compound SELECT (`select … union all select …`),
 * and SQLite refuses more than 500 terms there ("too many terms in compound SELECT").
 */
export const ROWS_PER_INSERT = 500;

interface PreparedConnection {
  prepare(sql: string): { run(values: unknown[]): { changes: number } };
}

/**
 * better-sqlite3 inside a transaction: one prepared statement run once per row on the transaction's own connection
 * (the connection keeps it, core/db/database.ts), the way SQLite writes many rows fastest: no statement text to
 * build or parse per batch, no compound SELECT or JSON to decode. Answers each run's count of changed rows; undefined
 * on any other driver, or outside a transaction (the pool's connection is not ours to hold), where the caller's
 * multi-row statement serves. Like a statement through knex, the rows wait for the event loop to turn whenever SQLite
 * work has held it for its slice (sqliteSliceSpent): an ingest's hundreds of rows no longer run in one go.
 */
export async function runEachRowPrepared(trx: Executor, sql: string, rows: readonly unknown[][]): Promise<number[] | undefined> {
  if (!trx.isTransaction || trx.client.config.client !== 'better-sqlite3') return undefined;
  const connection = (await trx.client.acquireConnection()) as PreparedConnection;
  const statement = connection.prepare(sql);
  const changes: number[] = [];
  for (const row of rows) {
    const turn = sqliteSliceSpent();
    if (turn) await turn;
    changes.push(statement.run(row as unknown[]).changes);
  }
  return changes;
}

/** A unique index refused the write (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE). */
export function isUniqueViolation(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || (code === 'SQLITE_CONSTRAINT' && /UNIQUE/.test(message ?? ''));
}

/** Escapes `%`, `_` and `\` so user text matches literally inside a LIKE pattern (with `escape '\'`). */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * `metadata[key]=v` filters on a JSON column: the key's value read as text (`1`, `true`, `"pro"` → `1`,
 * `true`, `pro`) must be one of the values given (OR), and every key must match (AND), as Polar does.
 * jsonb on PostgreSQL; JSON text walked with json_each on SQLite.
 */
export function whereMetadata(query: Knex.QueryBuilder, column: string, pg: boolean, filters: Record<string, string[]>): void {
  for (const [key, values] of Object.entries(filters)) {
    const placeholders = values.map(() => '?').join(', ');
    if (pg) {
      query.whereRaw(`(${column} ->> ?) in (${placeholders})`, [key, ...values]);
    } else {
      query.whereRaw(
        `exists (select 1 from json_each(${column}) as m where m.key = ? and ` +
          `(case m.type when 'true' then 'true' when 'false' then 'false' else cast(m.value as text) end) in (${placeholders}))`,
        [key, ...values],
      );
    }
  }
}

/**
 * knex options that make a PostgreSQL statement a named, prepared one (node-pg prepares it once per connection, then
 * only binds and executes it): for the hot reads, whose planning cost PostgreSQL 2–3× their execution (0.44–0.49 ms
 * against 0.14–0.22 ms, docs/performance.md, "Reads"), on the cores tilld shares with it. The name must stand for
 * one SQL text (include what varies it, such as a count of placeholders). The statement's result columns must not
 * name a table's columns (`t.*`): after a migration adds one (another daemon's, on a shared database), PostgreSQL
 * refuses to run a prepared statement whose result changed ("cached plan must not change result type"); a row as
 * `to_json(t)` keeps its type.
 */
export const preparedOnPostgres = (name: string) => ({ name });

interface PostgresConnection {
  query(config: { name: string; text: string; values: readonly unknown[] }): Promise<{ rows: Record<string, any>[] }>;
}
interface PostgresClient {
  positionBindings(sql: string): string;
  acquireConnection(): Promise<PostgresConnection>;
  releaseConnection(connection: PostgresConnection): Promise<unknown>;
}

/** Each prepared statement's SQL with PostgreSQL's placeholders ($1, $2…), by its name (which stands for one SQL text). */
const positionalSql = new Map<string, string>();

/**
 * The rows of a named, prepared statement on PostgreSQL (preparedOnPostgres), `?` placeholders as in knex.raw. Outside
 * a transaction it runs without knex's raw builder and runner (they turned the `?`s of the whole SQL text into `$n` on
 * every call and cost about as much as node-pg's own work on the hot reads, docs/performance.md, "Reads"; the
 * conversion is now made once a statement), on the daemon's pipelined connections (pipelinedRows: one socket write
 * for the reads of a turn), or on a connection of knex's pool when those failed. In a transaction, through knex.
 */
export async function preparedRowsOnPostgres(db: Executor, name: string, sql: string, bindings: readonly Knex.RawBinding[]): Promise<Record<string, any>[]> {
  if ((db as Knex.Transaction).isTransaction) return ((await db.raw(sql, bindings).options(preparedOnPostgres(name))) as { rows: Record<string, any>[] }).rows;
  const client = db.client as unknown as PostgresClient;
  let text = positionalSql.get(name);
  if (text === undefined) positionalSql.set(name, (text = client.positionBindings(sql)));
  const piped = await pipelinedRows(db.client as unknown as PipelineHost, name, text, bindings);
  if (piped) return piped;
  const connection = await client.acquireConnection();
  try {
    return (await connection.query({ name, text, values: bindings })).rows;
  } finally {
    await client.releaseConnection(connection);
  }
}
