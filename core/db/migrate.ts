import type { Knex } from 'knex';
import type { Database } from './database.js';
import { migrations } from './migrations/index.js';

/** A migration of Till's single history: auth and billing tables alike. */
export interface Migration {
  name: string;
  up(db: Knex): Promise<void>;
  down(db: Knex): Promise<void>;
}

/** Serves the migrations compiled into Till, so no directory has to be found at run time. */
class BundledMigrationSource implements Knex.MigrationSource<Migration> {
  constructor(private readonly list: readonly Migration[]) {}
  async getMigrations() {
    return [...this.list];
  }
  getMigrationName(migration: Migration) {
    return migration.name;
  }
  async getMigration(migration: Migration) {
    return migration;
  }
}

const config = (): Knex.MigratorConfig => ({
  migrationSource: new BundledMigrationSource(migrations),
  tableName: 'till_migrations',
});

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(db: Database): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(config())) as [number, string[]];
  return applied;
}

/** Undoes every migration (tests only). */
export async function rollbackAll(db: Database): Promise<void> {
  await db.migrate.rollback(config(), true);
}
