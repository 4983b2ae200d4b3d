import type { Knex } from 'knex';
import { clientOf, compiledSelect, directConnection, read, runOn, type SqliteClient } from './read.js';

type Executor = Knex | Knex.Transaction;
/** What a compiled read takes: values bound as they are, or lists (an `IN (…)`), whose length is part of the SQL. */
type Param = string | number | null | readonly (string | number)[];

/** Where a binding of the compiled SQL comes from: an argument, an element of a list argument, or the SQL itself. */
type Source = { arg: number; index?: number } | { value: unknown };
interface Compiled {
  sql: string;
  first: boolean;
  sources: Source[];
}

// Stand-ins for the arguments while the query is built once: control characters and digits only, so no SQL text
// or value of a real query holds one, and any change made to a value on its way in (case, trimming) shows.
const MARK = '\u0000\u0001';
const standIn = (arg: number, index?: number) => `${MARK}${arg}${index === undefined ? '' : `:${index}`}${MARK}`;
const shapeOf = (args: readonly Param[]) => args.map((arg) => (arg === null ? 'n' : Array.isArray(arg) ? arg.length : 'v')).join(',');

/** Shapes kept a read and client at most: lists of every length must not grow memory without end. */
const MAX_SHAPES = 64;


/**
 * The build compiled with stand-ins in place of the arguments, or null when that cannot stand for every call of this
 * shape: a stand-in that did not reach the bindings unchanged (the build computed with it, or left it out), one inside
 * the SQL text, or not a plain select. One may reach them several times (a list in each part of a union).
 */
function compile<A extends Param[]>(db: Executor, build: (db: Executor, ...args: A) => Knex.QueryBuilder, args: A): Compiled | null {
  const standIns = args.map((arg, i) => (arg === null ? null : Array.isArray(arg) ? arg.map((_, j) => standIn(i, j)) : standIn(i))) as A;
  const compiled = compiledSelect(build(db, ...standIns));
  if (!compiled || compiled.sql.includes(MARK)) return null;
  const expected = standIns.flatMap((arg) => (arg === null ? [] : Array.isArray(arg) ? arg : [arg]));
  const seen = new Set<string>();
  const sources: Source[] = [];
  for (const binding of compiled.bindings) {
    if (typeof binding !== 'string' || !binding.includes(MARK)) {
      sources.push({ value: binding });
      continue;
    }
    const match = /^\u0000\u0001(\d+)(?::(\d+))?\u0000\u0001$/.exec(binding);
    if (!match) return null;
    seen.add(binding);
    sources.push(match[2] === undefined ? { arg: Number(match[1]) } : { arg: Number(match[1]), index: Number(match[2]) });
  }
  if (seen.size !== expected.length) return null;
  return { ...constantLimitInlined(compiled.sql, sources), first: compiled.first };
}

/**
 * knex binds a query's limit (`.first()` is `limit ?` with 1); SQLite ran `select * from products where id = ? and
 * organization_id in (?) limit ?` in 31–36 µs and the same with `limit 1` in 11–16 µs (better-sqlite3, the reads
 * bench's data). A limit that is no argument of the read is written into the SQL.
 */
function constantLimitInlined(sql: string, sources: Source[]): { sql: string; sources: Source[] } {
  const last = sources.at(-1);
  if (!last || !('value' in last) || !Number.isSafeInteger(last.value) || !/ limit \?$/.test(sql)) return { sql, sources };
  return { sql: `${sql.slice(0, -1)}${last.value as number}`, sources: sources.slice(0, -1) };
}

/**
 * A select built with knex once and then run from its compiled SQL with each call's values bound: on SQLite, where
 * read() runs statements straight on a connection, building and compiling the query with knex cost about as much as
 * running it (docs/performance.md, "Reads"). `build` must make its SQL from the arguments' shape alone (which are
 * null, how long each list is), passing every argument to knex unchanged as a value; a build that does not (it
 * computes with an argument, or leaves one out) is noticed when compiled and simply built anew each call. Anywhere
 * read() would await knex (PostgreSQL, a transaction) the query is built and awaited as usual.
 */
export function compiledRead<T, A extends Param[]>(build: (db: Executor, ...args: A) => Knex.QueryBuilder): (db: Executor, ...args: A) => Promise<T> {
  // This read compiled, by knex client (its dialect, its formatting) and by the shape of the arguments.
  const compiledByClient = new WeakMap<SqliteClient, Map<string, Compiled | null>>();
  return async (db, ...args) => {
    const client = clientOf(db);
    const connection = directConnection(client);
    if (!connection) return read<T>(build(db, ...args));
    let byShape = compiledByClient.get(client);
    if (!byShape) compiledByClient.set(client, (byShape = new Map()));
    const shape = shapeOf(args);
    let compiled = byShape.get(shape);
    if (compiled === undefined) {
      compiled = compile(db, build, args);
      if (byShape.size < MAX_SHAPES) byShape.set(shape, compiled);
    }
    if (!compiled) return read<T>(build(db, ...args));
    const bindings = compiled.sources.map((source) => ('value' in source ? source.value : source.index === undefined ? args[source.arg] : (args[source.arg] as readonly unknown[])[source.index]));
    return runOn(connection, client, compiled.sql, compiled.first, bindings) as T;
  };
}
