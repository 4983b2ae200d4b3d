import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { ConfigError, loadConfig } from '../config.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { authClient, bearerClient, signUp, type SignedIn } from '../testing/auth-client.js';
import { createTokenVerifier } from '../../core/auth/verify-token.js';

// Signed tokens over HTTP. Date is faked in-process: Better Auth signs, rotates and publishes keys by
// Date.now(), and jose checks `exp` by it, so lifetimes and rotation are exact. Timers stay real.
const SECOND = 1000;

interface PublishedKey {
  kid: string;
  kty: string;
  alg: string;
  crv?: string;
  x?: string;
  d?: string;
}

const at = (ms: number) => vi.setSystemTime(ms);

async function tokenOf(signedIn: SignedIn, as: 'cookies' | 'bearer' = 'cookies'): Promise<string> {
  const res = await signedIn.client.get('/token', undefined, as);
  expect(res.status).toBe(200);
  return res.body.token as string;
}

async function publishedKeys(daemon: TestDaemon): Promise<PublishedKey[]> {
  const res = await authClient(daemon.url, { as: 'none' }).get('/jwks');
  expect(res.status).toBe(200);
  return res.body.keys as PublishedKey[];
}

const verifierFor = (daemon: TestDaemon) =>
  createTokenVerifier({ jwksUrl: `${daemon.url}/api/auth/jwks`, issuer: daemon.baseUrl, audience: daemon.baseUrl });

/** The token with its payload rewritten and its signature kept. */
function tampered(token: string, change: Record<string, unknown>): string {
  const [header, payload, signature] = token.split('.');
  const claims = { ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), ...change };
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('signed tokens (defaults: 3600 s lifetime)', () => {
  let daemon: TestDaemon;
  let alice: SignedIn;

  beforeAll(async () => {
    daemon = await startTestDaemon();
    alice = await signUp(daemon.url);
  });
  afterAll(async () => {
    await daemon?.close();
  });

  it('refuses a token to a caller without a session', async () => {
    const res = await authClient(daemon.url, { as: 'none' }).get('/token');
    expect(res.status).toBe(401);
  });

  it('refuses a token to a bearer token that is not a session', async () => {
    const res = await bearerClient(daemon.url, 'not-a-session.token').get('/token');
    expect(res.status).toBe(401);
  });

  it('issues a signed token for a signed-in session, under a key published at /jwks', async () => {
    const token = await tokenOf(alice);
    const header = decodeProtectedHeader(token);
    expect(header.alg).toBe('EdDSA');
    const keys = await publishedKeys(daemon);
    expect(keys.map((key) => key.kid)).toContain(header.kid);
    expect(keys.find((key) => key.kid === header.kid)).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });
  });

  it('issues one for the bearer token the CLI uses as well', async () => {
    const cli = bearerClient(daemon.url, alice.token);
    const res = await cli.get('/token');
    expect(res.status).toBe(200);
    expect(decodeJwt(res.body.token).sub).toBe(alice.user.id);
  });

  it('publishes only public keys, and stores the private key encrypted', async () => {
    await tokenOf(alice);
    for (const key of await publishedKeys(daemon)) expect(key).not.toHaveProperty('d');
    const rows = await daemon.db('jwks').select('privateKey', 'publicKey');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(JSON.parse(row.publicKey)).not.toHaveProperty('d');
      // Better Auth's symmetric encryption: a JSON string of hex ciphertext, not a JWK.
      const stored = JSON.parse(row.privateKey);
      expect(typeof stored).toBe('string');
      expect(row.privateKey).not.toContain('"d"');
    }
  });

  it('verifies offline with the helper, issued by and for the daemon’s base URL to the signed-in user', async () => {
    const token = await tokenOf(alice);
    const claims = await verifierFor(daemon).verify(token);
    expect(claims).toMatchObject({ sub: alice.user.id, email: alice.user.email, iss: daemon.baseUrl, aud: daemon.baseUrl });
  });

  it('signs tokens that live 3600 seconds: valid a second before, expired a second after', async () => {
    const token = await tokenOf(alice);
    const { iat, exp } = decodeJwt(token);
    expect(exp! - iat!).toBe(3600);
    const verifier = verifierFor(daemon);
    at((exp! - 1) * SECOND);
    await expect(verifier.verify(token)).resolves.toMatchObject({ sub: alice.user.id });
    at((exp! + 1) * SECOND);
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'ERR_JWT_EXPIRED' });
  });

  it('refuses a token whose claims were changed after signing', async () => {
    const token = await tokenOf(alice);
    const verifier = verifierFor(daemon);
    await expect(verifier.verify(tampered(token, { sub: 'another-user' }))).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
    await expect(verifier.verify(tampered(token, { exp: Math.floor(Date.now() / SECOND) + 86_400 }))).rejects.toMatchObject({
      code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
    });
  });

  it('refuses a token meant for another audience or from another issuer', async () => {
    const token = await tokenOf(alice);
    const jwksUrl = `${daemon.url}/api/auth/jwks`;
    const otherAudience = createTokenVerifier({ jwksUrl, issuer: daemon.baseUrl, audience: 'https://shop.example' });
    await expect(otherAudience.verify(token)).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' });
    const otherIssuer = createTokenVerifier({ jwksUrl, issuer: 'https://till.example', audience: daemon.baseUrl });
    await expect(otherIssuer.verify(token)).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'iss' });
  });

  it('signs nothing but session tokens over HTTP: Better Auth’s server-only sign and verify endpoints are not served', async () => {
    const cli = bearerClient(daemon.url, alice.token);
    for (const path of ['/sign-jwt', '/verify-jwt', '/signJWT']) {
      expect((await cli.post(path, { payload: { sub: 'someone' } })).status).toBe(404);
    }
  });

  it('refuses a token with no signature', async () => {
    const token = await tokenOf(alice);
    const [, payload] = token.split('.');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${payload}.`;
    await expect(verifierFor(daemon).verify(unsigned)).rejects.toThrow();
  });
});

describe('key rotation (TILL_JWT_ROTATION_INTERVAL=7200, TILL_JWT_GRACE_PERIOD=3600)', () => {
  let daemon: TestDaemon;

  beforeAll(async () => {
    daemon = await startTestDaemon({ TILL_JWT_ROTATION_INTERVAL: '7200', TILL_JWT_GRACE_PERIOD: '3600' });
  });
  afterAll(async () => {
    await daemon?.close();
  });

  it('signs with a new key once the old one is due, and keeps the old one published for the grace period', async () => {
    const t0 = Date.now();
    const alice = await signUp(daemon.url);
    const first = decodeProtectedHeader(await tokenOf(alice)).kid; // makes the first key, due at t0 + 7200 s

    // Given a token signed just before the first key is due (it lives until t0 + 10600 s)…
    at(t0 + 7000 * SECOND);
    const old = await tokenOf(alice);
    expect(decodeProtectedHeader(old).kid).toBe(first);
    const verifier = verifierFor(daemon);
    await expect(verifier.verify(old)).resolves.toMatchObject({ sub: alice.user.id });

    // …when the key is due, the next token is signed by a new key, and both keys are published.
    at(t0 + 7300 * SECOND);
    const fresh = await tokenOf(alice);
    const second = decodeProtectedHeader(fresh).kid;
    expect(second).not.toBe(first);
    expect((await publishedKeys(daemon)).map((key) => key.kid).sort()).toEqual([first, second].sort());
    // The verifier that cached the old set fetches again for the unknown key; the old token still verifies.
    await expect(verifier.verify(fresh)).resolves.toMatchObject({ sub: alice.user.id });
    await expect(verifier.verify(old)).resolves.toMatchObject({ sub: alice.user.id });
    await expect(verifierFor(daemon).verify(old)).resolves.toMatchObject({ sub: alice.user.id });

    // After the grace period the old key is no longer published.
    at(t0 + (7200 + 3600 + 60) * SECOND);
    expect((await publishedKeys(daemon)).map((key) => key.kid)).toEqual([second]);
    await expect(verifierFor(daemon).verify(old)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
  });

  it('refuses to start with a grace period shorter than the token lifetime', () => {
    expect(() => loadConfig({ TILL_SECRET: 'x'.repeat(32), TILL_DATA_DIR: '/tmp', TILL_JWT_EXPIRES_IN: '3600', TILL_JWT_GRACE_PERIOD: '600' })).toThrow(ConfigError);
    expect(() => loadConfig({ TILL_SECRET: 'x'.repeat(32), TILL_DATA_DIR: '/tmp', TILL_JWT_GRACE_PERIOD: '600' })).toThrow(
      /TILL_JWT_GRACE_PERIOD \(600 s\) must be at least TILL_JWT_EXPIRES_IN \(3600 s\)/,
    );
  });
});
