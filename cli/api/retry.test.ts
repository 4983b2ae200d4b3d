import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CliError, EXIT } from '../errors.js';
import { createApiClient } from './client.js';
import { retryFromEnv } from './retry.js';

let server: Server;
let url: string;
let hits = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    hits += 1;
    res.writeHead(503, { 'content-type': 'application/json' }).end('{"detail":"down"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  delete process.env.TILL_RETRIES;
  hits = 0;
});

const noWait = async () => {};

describe('TILL_RETRIES', () => {
  it('sets how many times a retryable request is tried again after the first try', async () => {
    process.env.TILL_RETRIES = '4';
    const api = createApiClient({ server: url, sleep: noWait });
    expect(await api.send('GET', '/down')).toMatchObject({ status: 503, attempts: 5 });
    expect(hits).toBe(5);
  });

  it('turns retrying off with 0', async () => {
    process.env.TILL_RETRIES = '0';
    const api = createApiClient({ server: url, sleep: noWait });
    expect(await api.send('GET', '/down')).toMatchObject({ status: 503, attempts: 1 });
    expect(hits).toBe(1);
  });

  it('keeps the default of 2 retries (3 tries) when unset or empty', async () => {
    expect(retryFromEnv({})).toEqual({});
    expect(retryFromEnv({ TILL_RETRIES: '' })).toEqual({});
    const api = createApiClient({ server: url, sleep: noWait });
    expect(await api.send('GET', '/down')).toMatchObject({ attempts: 3 });
  });

  it('does not override a command that sets its own policy', async () => {
    process.env.TILL_RETRIES = '5';
    const api = createApiClient({ server: url, sleep: noWait, retry: { attempts: 1 } });
    expect(await api.send('GET', '/down')).toMatchObject({ attempts: 1 });
  });

  it('refuses a value that is not a whole number from 0 to 10, as a usage error', () => {
    for (const value of ['-1', '11', 'three', '1.5']) {
      let thrown: unknown;
      try {
        retryFromEnv({ TILL_RETRIES: value });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(CliError);
      expect(thrown).toMatchObject({ code: 'INVALID_TILL_RETRIES', exitCode: EXIT.usage, message: `TILL_RETRIES must be a whole number from 0 to 10; got "${value}".` });
    }
  });
});
