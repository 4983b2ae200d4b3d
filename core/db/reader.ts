import type { Knex } from 'knex';

interface SqliteStatement {
  readonly busy: boolean;
  all(values: unknown[]): unknown[];
}
export interface SqliteReadConnection {
  pragma(sql: string): unknown;
  prepare(sql: string): SqliteStatement;
  close(): void;
}
interface ReaderSlot {
  filename: string;
  pragmas: readonly string[];
  prepare: (conn: SqliteReadConnection) => void;
  connection?: SqliteReadConnection;
}

const slots = new WeakMap<object, ReaderSlot>();

/**
 * Lets read() (core/db/read.ts) answer from a second, read-only connection on the same SQLite file while the pool's one
 * connection is held: in WAL mode a reader runs beside the writer and sees the last commit, so a hot read no longer
 * queues behind every ingest and job transaction waiting for the connection. Opened at its first use (the file
 * exists and is migrated by then). Not for an in-memory database, whose second connection would be another database.
 */
export function enableSqliteReader(client: Knex.Client, settings: Omit<ReaderSlot, 'connection'>): void {
  if (settings.filename === ':memory:' || settings.filename === '' || settings.filename.startsWith('file::memory:')) return;
  slots.set(client, { ...settings });
}

/** The read-only connection of this client's database, opened now if need be; undefined where there is none. */
export function sqliteReader(client: object): SqliteReadConnection | undefined {
  const slot = slots.get(client);
  if (!slot) return undefined;
  if (!slot.connection) {
    const Driver = (client as { driver: new (filename: string, options: { readonly: boolean; fileMustExist: boolean }) => SqliteReadConnection }).driver;
    const connection = new Driver(slot.filename, { readonly: true, fileMustExist: true });
    for (const pragma of slot.pragmas) connection.pragma(pragma);
    slot.prepare(connection);
    slot.connection = connection;
  }
  return slot.connection;
}

/** Closes the read-only connection (with the pool: Database.destroy). */
export function closeSqliteReader(client: object): void {
  const slot = slots.get(client);
  slots.delete(client);
  slot?.connection?.close();
}
