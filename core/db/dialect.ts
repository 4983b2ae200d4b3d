import type { Knex } from 'knex';

/** Column helpers that read the same on both dialects; migrations use them so types stay consistent. */
export function columnHelpers(db: Knex) {
  const pg = ['pg', 'postgres', 'postgresql'].includes(String(db.client.config.client));
  return {
    pg,
    /** timestamptz on PostgreSQL; ISO-8601 UTC text in a datetime column on SQLite. */
    timestamp: (t: Knex.CreateTableBuilder, name: string) => (pg ? t.timestamp(name, { useTz: true }) : t.dateTime(name)),
    /** jsonb on PostgreSQL; JSON text on SQLite. */
    json: (t: Knex.CreateTableBuilder, name: string) => (pg ? t.jsonb(name) : t.text(name)),
    /** Money and counters: bigint (pg returns it as a string; repositories convert). */
    amount: (t: Knex.CreateTableBuilder, name: string) => t.bigInteger(name),
  };
}
