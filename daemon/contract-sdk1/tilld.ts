import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { execa, type ResultPromise } from 'execa';
import pg from 'pg';

const TILLD = join(import.meta.dirname, '..', '..', 'bin', 'tilld');

export interface TilldProcess {
  url: string;
  stop(): Promise<void>;
}

/**
 * A real tilld process on a database of its own: SQLite in a temp folder, or a new PostgreSQL database on the server
 * TILL_TEST_DATABASE_URL names. It runs on the Node that runs Till (TILL_TILLD_NODE, else the `node` on PATH), not on
 * the Node 22 this suite runs on: tilld's native SQLite module is built for the former. `env` adds to its configuration.
 */
export async function startTilld(env: Record<string, string> = {}): Promise<TilldProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'till-sdk1-'));
  const serverUrl = process.env.TILL_TEST_DATABASE_URL;
  let databaseUrl = join(dataDir, 'till.sqlite');
  let dropDatabase = async () => {};
  if (serverUrl) {
    const name = `till_sdk1_${randomBytes(6).toString('hex')}`;
    await adminQuery(serverUrl, `create database ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    dropDatabase = () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
  }
  const child = execa(process.env.TILL_TILLD_NODE || 'node', [TILLD], {
    env: { TILL_DATA_DIR: dataDir, TILL_DATABASE_URL: databaseUrl, TILL_PORT: '0', TILL_LOG_LEVEL: 'info', TILL_RATE_LIMIT: 'off', TILL_SECRET: randomBytes(24).toString('hex'), ...env },
    reject: false,
  });
  const url = await listeningUrl(child);
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await child;
      await dropDatabase();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function listeningUrl(child: ResultPromise): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n')) if (line.includes('"tilld listening"')) resolve(JSON.parse(line).url);
    });
    child.once('exit', () => reject(new Error(`tilld exited before listening: ${buffered}`)));
  });
}

async function adminQuery(serverUrl: string, sql: string) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
