import { closeEventHub } from '../core/webhooks/stream.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestDaemon, type TestDaemon } from './testing/daemon.js';

describe('tilld over HTTP', () => {
  let daemon: TestDaemon;
  beforeAll(async () => {
    daemon = await startTestDaemon({ TILL_BODY_LIMIT: '2048' });
  });
  afterAll(async () => {
    await daemon?.close();
  });

  it('answers /healthz while the process is up', async () => {
    const res = await fetch(`${daemon.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', version: expect.any(String) });
  });

  it('answers /readyz when the database answers', async () => {
    const res = await fetch(`${daemon.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', database: 'ok' });
  });

  it('gives every response a request id and logs it', async () => {
    const res = await fetch(`${daemon.url}/healthz`);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // The line is written as the response finishes: poll for it rather than hope a fixed wait is enough.
    const line = await vi.waitFor(() => daemon.logs.find((entry) => entry.request_id === id) ?? Promise.reject(new Error(`no log line for request ${id} yet`)), { timeout: 10_000, interval: 10 });
    expect(line).toMatchObject({ level: 30, req: { method: 'GET', path: '/healthz' }, res: { status: 200 } });
  });

  it('keeps a well-formed request id sent by the caller and replaces a malformed one', async () => {
    const kept = await fetch(`${daemon.url}/healthz`, { headers: { 'x-request-id': 'ci-run-42' } });
    expect(kept.headers.get('x-request-id')).toBe('ci-run-42');
    const replaced = await fetch(`${daemon.url}/healthz`, { headers: { 'x-request-id': 'bad id\twith spaces' } });
    // A fresh UUID in its place (which may itself contain the letters "bad": compare the whole id).
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('sends security headers and no x-powered-by', async () => {
    const res = await fetch(`${daemon.url}/healthz`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(res.headers.get('x-powered-by')).toBeNull();
  });

  it('refuses an auth request body above the limit with 413, not a 500', async () => {
    const res = await fetch(`${daemon.url}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(4096) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'PAYLOAD_TOO_LARGE' });
  });

  it('refuses a chunked auth body above the limit with 413 too', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${daemon.url}/api/auth/sign-up/email`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      // No Content-Length: node sends it chunked, so only reading the body can tell its size.
      req.write('{"name":"Chunky","email":"chunky@example.com","password":"');
      req.write('x'.repeat(4096));
      req.end('"}');
    });
    expect(status).toBe(413);
  });

  it('answers an unknown route with a JSON 404', async () => {
    const res = await fetch(`${daemon.url}/no/such/route`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'ResourceNotFound' });
  });

  it('never writes a password or token into the logs', async () => {
    await fetch(`${daemon.url}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer very-secret-token' },
      body: JSON.stringify({ name: 'Log Test', email: 'log-test@example.com', password: 'correct-horse-battery' }),
    });
    const text = JSON.stringify(daemon.logs);
    expect(text).not.toContain('correct-horse-battery');
    expect(text).not.toContain('very-secret-token');
  });
});

describe('tilld event-loop delay (TILL_DEBUG_LOOP_DELAY)', () => {
  it('has no /debug/loop-delay unless TILL_DEBUG_LOOP_DELAY is set', async () => {
    const daemon = await startTestDaemon();
    try {
      expect((await fetch(`${daemon.url}/debug/loop-delay`)).status).toBe(404);
    } finally {
      await daemon.close();
    }
  });

  it('serves the delays seen so far in ms and starts over after ?reset=1', async () => {
    const daemon = await startTestDaemon({ TILL_DEBUG_LOOP_DELAY: '1' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const first = await (await fetch(`${daemon.url}/debug/loop-delay?reset=1`)).json();
      expect(first).toMatchObject({ resolution_ms: 2, p50_ms: expect.any(Number), p99_ms: expect.any(Number), max_ms: expect.any(Number) });
      expect(first.samples).toBeGreaterThan(0);
      const after = await (await fetch(`${daemon.url}/debug/loop-delay`)).json();
      expect(after.samples).toBeLessThan(first.samples + 5);
    } finally {
      await daemon.close();
    }
  });
});

describe('tilld readiness', () => {
  it('reports 503 on /readyz once the database is gone, while /healthz still answers', async () => {
    const daemon = await startTestDaemon();
    try {
      // Background work holds pool connections between polls; a pool waits for them before it is destroyed.
      await daemon.stopBackground();
      await closeEventHub(daemon.db);
      await daemon.db.destroy();
      const ready = await fetch(`${daemon.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'unavailable', database: 'unreachable' });
      expect((await fetch(`${daemon.url}/healthz`)).status).toBe(200);
    } finally {
      await daemon.close();
    }
  });
});

describe('tilld shutdown', () => {
  it('finishes an in-flight request before it stops accepting connections', async () => {
    const daemon = await startTestDaemon();
    // A slow upload keeps a request in flight while stop() begins.
    const { request } = await import('node:http');
    const inFlight = new Promise<number>((resolve, reject) => {
      const req = request(`${daemon.url}/api/auth/sign-up/email`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.write('{"name":"Slow","email":"slow@example.com",');
      setTimeout(() => req.end('"password":"slow-password-123"}'), 300);
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stopped = daemon.close();
    expect(await inFlight).toBe(200);
    await stopped;
    await expect(fetch(`${daemon.url}/healthz`)).rejects.toThrow();
  });
});
