import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { authClient, signUp, uniqueEmail, type AuthClient } from '../testing/auth-client.js';

// SPEC §8 words the message 'Invalid body parameters' / 'Invalid query parameters'. Better Auth
// 1.7.25 (better-call) answers the same 400 + VALIDATION_ERROR but names each failing field instead,
// e.g. "[body.email] Invalid input: expected string, received undefined"; that is what is asserted.

let daemon: TestDaemon;
let anonymous: AuthClient;
let admin: AuthClient;

beforeAll(async () => {
  daemon = await startTestDaemon();
  anonymous = authClient(daemon.url);
  admin = (await signUp(daemon.url)).client;
});
afterAll(async () => {
  await daemon?.close();
});

describe('bad bodies', () => {
  it('answers 400 VALIDATION_ERROR naming every missing body field', async () => {
    const res = await anonymous.post('/sign-in/email', {});
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.message).toContain('[body.email]');
    expect(res.body.message).toContain('[body.password]');
  });

  it('answers 400 VALIDATION_ERROR to a field of the wrong type', async () => {
    const res = await admin.post('/revoke-session', { token: 42 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: '[body.token] Invalid input: expected string, received number' });
  });

  it('answers 400 VALIDATION_ERROR to an invalid email on sign-up', async () => {
    const res = await anonymous.post('/sign-up/email', { email: 'not-an-email', password: 'long enough password', name: 'X' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: '[body.email] Invalid email address' });
  });

  it('refuses passwords shorter than 8 or longer than 128 characters', async () => {
    const short = await anonymous.post('/sign-up/email', { email: uniqueEmail(), password: 'short', name: 'X' });
    expect(short.status).toBe(400);
    expect(short.body).toEqual({ code: 'PASSWORD_TOO_SHORT', message: 'Password too short' });
    const long = await anonymous.post('/sign-up/email', { email: uniqueEmail(), password: 'x'.repeat(129), name: 'X' });
    expect(long.status).toBe(400);
    expect(long.body).toEqual({ code: 'PASSWORD_TOO_LONG', message: 'Password too long' });
  });

  it('answers 400 to malformed JSON, not 500', async () => {
    const res = await anonymous.request('POST', '/sign-in/email', { body: '{"email":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'BAD_REQUEST', message: 'Invalid JSON in request body' });
  });

  it('answers 415 to a body that is neither JSON nor a form', async () => {
    const res = await anonymous.request('POST', '/sign-in/email', { body: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 413 to a body over the daemon’s limit', async () => {
    const res = await anonymous.post('/sign-in/email', { email: 'a@b.co', password: 'x'.repeat(2 * 1024 * 1024) });
    expect(res.status).toBe(413);
  });

  it('answers the RFC 8628 invalid_request to a device-code request without client_id', async () => {
    const res = await anonymous.post('/device/code', {});
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.error_description).toContain('[body.client_id]');
  });
});

describe('bad queries', () => {
  it('answers 400 VALIDATION_ERROR to a missing query parameter', async () => {
    const res = await anonymous.get('/device');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: '[query.user_code] Invalid input: expected string, received undefined' });
  });

  it('validates the query before anything else, even for an admin', async () => {
    const res = await admin.get('/admin/get-user');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: '[query.id] Invalid input: expected string, received undefined' });
  });
});
