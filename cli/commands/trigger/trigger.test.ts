import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateEvent } from '@polar-sh/sdk/webhooks.js';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../core/db/database.js';
import { createTestDatabase, type TestDatabase } from '../../../core/testing/database.js';
import { loadConfig, type DaemonConfig } from '../../../daemon/config.js';
import { createLogger } from '../../../daemon/logger.js';
import { startDaemon, type RunningDaemon } from '../../../daemon/server.js';
import { signUp } from '../../../daemon/testing/auth-client.js';
import { v1Request } from '../../../daemon/testing/v1.js';
import { createOrganization } from '../../testing/catalog.js';
import { startReceiver, type Receiver } from '../../testing/receiver.js';
import { TILL_BIN, tempConfigDir, till, tillEnv } from '../../testing/till.js';
import { EVENT_TYPES } from '../listen/event-types.js';
import { availableTriggers } from './trigger.js';

/*
 * The done-means test of issue 7: `till listen --forward-to` receives every event type `till trigger` can make,
 * signed, and catches up after the daemon it listens to is restarted mid-way.
 */

let database: TestDatabase;
let config: DaemonConfig;
let daemon: RunningDaemon;
let receiver: Receiver;
let env: Record<string, string>;
let listener: ResultPromise;
let listenOutput = '';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const start = (db = database.db) => startDaemon(config, createLogger('silent'), { db });

beforeAll(async () => {
  database = await createTestDatabase();
  config = loadConfig({
    TILL_PORT: String(await freePort()),
    TILL_DATA_DIR: mkdtempSync(join(tmpdir(), 'till-data-')),
    TILL_SECRET: 'test-secret-test-secret-test-secret-0123',
    TILL_RATE_LIMIT: 'off',
    TILL_LISTEN_POLL_MS: '200',
  });
  daemon = await start();
  const user = await signUp(daemon.url, { name: 'Tia Trigger' });
  const { organizationId } = await createOrganization(user, 'Trigger Shop');
  // `till trigger` writes into sandbox organizations only (without --yes).
  const marked = await v1Request(daemon.url, user.token, 'PATCH', `/organizations/${organizationId}/clock`, { sandbox: true });
  if (marked.status !== 200) throw new Error(`sandbox on failed: ${marked.status}`);
  env = { TILL_SERVER: daemon.url, TILL_TOKEN: user.token, TILL_CONFIG_DIR: tempConfigDir(), TILL_ORG: organizationId };
  receiver = await startReceiver();
});
afterAll(async () => {
  listener?.kill('SIGINT');
  await receiver?.close();
  await daemon?.stop();
  await database?.destroy();
});

describe('till trigger', () => {
  it('has a fixture for event types of the daemon only', () => {
    const available = availableTriggers();
    expect(available.length).toBeGreaterThan(0);
    for (const type of available) expect(EVENT_TYPES).toContain(type);
  });

  it('lists the types it can trigger', async () => {
    const result = await till(['trigger', '--json'], env);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).event_types).toEqual(availableTriggers());
  });

  it('refuses an unknown type, suggesting the nearest one', async () => {
    const result = await till(['trigger', 'product.create'], env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('Did you mean "product.created"?');
  });

  it('delivers every triggerable type to `till listen --forward-to`, signed, across a daemon restart', { timeout: 240_000 }, async () => {
    listener = execa(process.execPath, [TILL_BIN, 'listen', '--forward-to', receiver.url, '--timeout', '60'], { env: tillEnv(env), extendEnv: false, reject: false });
    listener.stdout!.on('data', (chunk: Buffer) => (listenOutput += chunk.toString()));
    await expect.poll(() => listenOutput, { timeout: 15_000 }).toContain('Ready!');
    const secret = (await till(['listen', '--print-secret'], env)).stdout;

    // Triggers run a few at a time (each picks out the event about what it created); the daemon restarts half-way.
    const types = availableTriggers();
    const half = Math.ceil(types.length / 2);
    const produced: { type: string; id: string }[] = [];
    const run = async (type: string) => {
      const result = await till(['trigger', type, '--json'], env);
      expect(result.exitCode, `${type}: ${result.stderr}`).toBe(0);
      const outcome = JSON.parse(result.stdout) as { event: { id: string; type: string; data: unknown }; ids: Record<string, string> };
      expect(outcome.event.type).toBe(type);
      // The event is about something this trigger created.
      expect(Object.values(outcome.ids).some((id) => JSON.stringify(outcome.event.data).includes(id)), type).toBe(true);
      produced.push({ type, id: outcome.event.id });
    };
    const inBatches = async (list: string[]) => {
      for (let i = 0; i < list.length; i += 4) await Promise.all(list.slice(i, i + 4).map(run));
    };
    await inBatches(types.slice(0, half));
    // The daemon goes away and comes back on the same address and database.
    await daemon.stop();
    await expect.poll(() => listenOutput, { timeout: 10_000 }).toContain('Connection lost');
    daemon = await start(createDatabase(database.config));
    await inBatches(types.slice(half));
    expect(produced.map((p) => p.type).sort()).toEqual([...types].sort());
    // Distinct triggers caught distinct events.
    expect(new Set(produced.map((p) => p.id)).size).toBe(produced.length);

    for (const { type, id } of produced) {
      await expect.poll(() => receiver.received.some((r) => r.headers['webhook-id'] === id), { timeout: 15_000, message: `${type} ${id} was not forwarded` }).toBe(true);
      const request = receiver.received.find((r) => r.headers['webhook-id'] === id)!;
      const event = validateEvent(request.body, receiver.webhookHeaders(request), secret) as { type: string };
      expect(event.type).toBe(type);
    }
    expect(listenOutput).toContain('Reconnected');
    // Every event was forwarded once, however many times the stream replayed it.
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
