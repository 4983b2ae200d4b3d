import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import knex from 'knex';
import { createDatabase, type Database, type DatabaseConfig } from '../db/database.js';

export interface TestDatabase {
  db: Database;
  config: DatabaseConfig;
  /** Closes the pool and removes the database (file or PostgreSQL database). */
  destroy(): Promise<void>;
}

/**
 * A database of the test's own, so test files run in parallel: a temp SQLite file by default,
 * or a fresh PostgreSQL database on the server named by TILL_TEST_DATABASE_URL.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TILL_TEST_DATABASE_URL;
  if (serverUrl) return createPostgresTestDatabase(serverUrl);
  const dir = mkdtempSync(join(tmpdir(), 'till-test-'));
  const config: DatabaseConfig = { client: 'sqlite', filename: join(dir, 'till.sqlite') };
  const db = createDatabase(config);
  return {
    db,
    config,
    async destroy() {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function createPostgresTestDatabase(serverUrl: string): Promise<TestDatabase> {
  const name = `till_test_${randomBytes(6).toString('hex')}`;
  const admin = knex({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const config: DatabaseConfig = { client: 'postgres', connectionString: url.toString() };
  const db = createDatabase(config);
  return {
    db,
    config,
    async destroy() {
      await db.destroy();
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}
