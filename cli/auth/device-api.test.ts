import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../api/client.js';
import { pollDeviceToken } from './device-api.js';

/** A token endpoint that answers each poll with the next scripted status and body. */
let answers: { status: number; body: unknown }[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = answers.shift() ?? { status: 500, body: {} };
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('pollDeviceToken', () => {
  it('reads the four RFC 8628 answers and a token', async () => {
    const api = createApiClient({ server: url });
    answers = [
      { status: 400, body: { error: 'authorization_pending' } },
      { status: 400, body: { error: 'slow_down' } },
      { status: 400, body: { error: 'access_denied' } },
      { status: 400, body: { error: 'expired_token' } },
      { status: 200, body: { access_token: 'tok', token_type: 'Bearer' } },
    ];
    const kinds = [];
    for (let i = 0; i < 5; i++) kinds.push(await pollDeviceToken(api, 'device-code'));
    expect(kinds).toEqual([{ kind: 'pending' }, { kind: 'slow_down' }, { kind: 'denied' }, { kind: 'expired' }, { kind: 'token', accessToken: 'tok' }]);
  });

  it('takes a 429 from the rate limiter as slow_down instead of giving up the login', async () => {
    answers = [{ status: 429, body: { message: 'Too many requests. Please try again later.' } }];
    await expect(pollDeviceToken(createApiClient({ server: url }), 'device-code')).resolves.toEqual({ kind: 'slow_down' });
  });
});
