import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import knex from 'knex';
import { inject } from 'vitest';
import { createDatabase, type Database, type DatabaseConfig } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated PostgreSQL template database the global setup made for this run (PostgreSQL runs only). */
    tillPostgresTemplate?: string;
  }
}

export interface TestDatabase {
  db: Database;
  config: DatabaseConfig;
  /** Closes the pool and removes the database (file or PostgreSQL database). */
  destroy(): Promise<void>;
}

export interface TestDatabaseOptions {
  /**
   * Hand the database over with Till's migrations applied. On PostgreSQL it is then cloned from the template the
   * global setup migrated once for the run (`create database … template …`, about 30 ms instead of about half a
   * second of migrating); on SQLite the migrations run here (about 50 ms). Tests of the migrations themselves leave
   * this off.
   */
  migrated?: boolean;
}

/**
 * A database of the test's own, so test files run in parallel: a temp SQLite file by default,
 * or a fresh PostgreSQL database on the server named by TILL_TEST_DATABASE_URL.
 */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = process.env.TILL_TEST_DATABASE_URL;
  if (serverUrl) return createPostgresTestDatabase(serverUrl, options.migrated ?? false);
  const dir = mkdtempSync(join(tmpdir(), 'till-test-'));
  const config: DatabaseConfig = { client: 'sqlite', filename: join(dir, 'till.sqlite') };
  const db = createDatabase(config);
  const destroy = async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  };
  if (options.migrated) await migrateOrDestroy(db, destroy);
  return { db, config, destroy };
}

/** Migrates a new test database; if that fails, removes the database before the error goes on. */
async function migrateOrDestroy(db: Database, destroy: () => Promise<void>): Promise<void> {
  try {
    await migrateToLatest(db);
  } catch (error) {
    await destroy().catch(() => undefined);
    throw error;
  }
}

async function createPostgresTestDatabase(serverUrl: string, migrated: boolean): Promise<TestDatabase> {
  const template = migrated ? inject('tillPostgresTemplate') : undefined;
  const name = `till_test_${randomBytes(6).toString('hex')}`;
  const admin = knex({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  await admin.raw(template ? `create database ${name} template ${template}` : `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const config: DatabaseConfig = { client: 'postgres', connectionString: url.toString() };
  const db = createDatabase(config);
  const destroy = async () => {
    await db.destroy();
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
  };
  // No template (a run without the global setup): migrate here, since the caller asked for a migrated database.
  if (migrated && !template) await migrateOrDestroy(db, destroy);
  return { db, config, destroy };
}
