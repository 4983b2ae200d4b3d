import type { Knex } from 'knex';

/**
 * Rows in one multi-row INSERT: knex writes one on SQLite as a compound SELECT (`select … union all select …`),
 * and SQLite refuses more than 500 terms there ("too many terms in compound SELECT").
 */
export const ROWS_PER_INSERT = 500;

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
