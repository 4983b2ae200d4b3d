import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { randomBytes } from 'node:crypto';
import knex from 'knex';
import { createDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';

/**
 * CLI tests run the built `till`, so the suite builds once before any file runs. On PostgreSQL, the migrated template
 * that createTestDatabase({ migrated: true }) clones is made here, once for the run, and dropped at its end.
 */
export default async function setup(project: TestProject) {
  if (!(process.env.TILL_SKIP_BUILD === '1' && existsSync('dist/cli/till.js'))) execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  const serverUrl = process.env.TILL_TEST_DATABASE_URL;
  if (!serverUrl) return;
  const template = await createPostgresTemplate(serverUrl);
  project.provide('tillPostgresTemplate', template.name);
  return () => template.drop();
}

/**
 * Creates a PostgreSQL database with every migration applied, for createTestDatabase({ migrated: true }) to clone.
 * Made once per run, above; the returned function drops it.
 */
async function createPostgresTemplate(serverUrl: string): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `till_template_${randomBytes(6).toString('hex')}`;
  const admin = knex({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // No connection may stay open on a template while databases are cloned from it.
  const db = createDatabase({ client: 'postgres', connectionString: url.toString() });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  return {
    name,
    async drop() {
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}
