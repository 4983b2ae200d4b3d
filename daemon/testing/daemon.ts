import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createTestDatabase, type TestDatabase } from '../../core/testing/database.js';
import { loadConfig, type DaemonConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { startDaemon, type RunningDaemon } from '../server.js';

export interface TestDaemon extends RunningDaemon {
  database: TestDatabase;
  /** Log lines written so far, parsed (tests check what reaches the logs). */
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * A real tilld on a database of its own, listening on a free port of 127.0.0.1.
 * `env` takes the same variables as bin/tilld (rate limiting is off unless asked for). Without Stripe's keys it is
 * a sandbox-only server (TILL_SANDBOX_ONLY) unless `env` says otherwise: every organization pays with test cards,
 * as the tests of the commerce flows expect; a test of the production rule passes `TILL_SANDBOX_ONLY: '0'`.
 */
export async function startTestDaemon(env: Record<string, string> = {}, tweak?: (config: DaemonConfig) => void): Promise<TestDaemon> {
  const database = await createTestDatabase({ migrated: true });
  const config = loadConfig({
    TILL_PORT: '0',
    TILL_DATA_DIR: mkdtempSync(join(tmpdir(), 'till-data-')),
    TILL_SECRET: 'test-secret-test-secret-test-secret-0123',
    TILL_RATE_LIMIT: 'off',
    TILL_LOG_LEVEL: 'info',
    ...(env.TILL_STRIPE_SECRET_KEY ? {} : { TILL_SANDBOX_ONLY: '1' }),
    ...env,
  });
  tweak?.(config);
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const daemon = await startDaemon(config, createLogger(config.logLevel, sink), { db: database.db });
  return {
    ...daemon,
    database,
    logs,
    async close() {
      await daemon.stop();
      await database.destroy().catch(() => {});
    },
  };
}
