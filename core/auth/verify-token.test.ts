import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createTokenVerifier, TOKEN_VERIFIER_DEFAULTS } from './verify-token.js';

// A key-set server of the test's own, counting its fetches; Date is faked so cache ages are exact.
const ISSUER = 'https://till.example';

interface Key {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA' } };
}

const sign = (key: Key, claims: Record<string, unknown> = {}) =>
  new SignJWT({ email: 'a@example.test', ...claims })
    .setProtectedHeader({ alg: 'EdDSA', kid: key.kid })
    .setSubject('user-1')
    .setIssuer(ISSUER)
    .setAudience(ISSUER)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(key.privateKey);

let server: Server;
let jwksUrl: string;
let published: Key[] = [];
let fetches = 0;
let hang = false;

beforeAll(async () => {
  server = createServer((_req, res) => {
    fetches += 1;
    if (hang) return; // never answers; the verifier's timeout must end the wait
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: published.map((key) => key.publicJwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/auth/jwks`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  fetches = 0;
  hang = false;
});
afterEach(() => {
  vi.useRealTimers();
});

describe('createTokenVerifier', () => {
  it('caches the key set as SPEC §9 says by default: 5000 ms timeout, 30000 ms cooldown, 600000 ms max age', () => {
    expect(TOKEN_VERIFIER_DEFAULTS).toEqual({ fetchTimeoutMs: 5000, cooldownMs: 30_000, cacheMaxAgeMs: 600_000 });
  });

  it('fetches the key set once and verifies later tokens from its cache', async () => {
    const key = await newKey('k1');
    published = [key];
    const verifier = createTokenVerifier({ jwksUrl, issuer: ISSUER, audience: ISSUER });
    await expect(verifier.verify(await sign(key))).resolves.toMatchObject({ sub: 'user-1', email: 'a@example.test' });
    await expect(verifier.verify(await sign(key, { email: 'b@example.test' }))).resolves.toMatchObject({ email: 'b@example.test' });
    expect(fetches).toBe(1);
  });

  it('fetches again once the cached set is older than the cache max age', async () => {
    const key = await newKey('k1');
    published = [key];
    const verifier = createTokenVerifier({ jwksUrl, cacheMaxAgeMs: 60_000 });
    await verifier.verify(await sign(key));
    vi.setSystemTime(Date.now() + 59_000);
    await verifier.verify(await sign(key));
    expect(fetches).toBe(1);
    vi.setSystemTime(Date.now() + 2_000);
    await verifier.verify(await sign(key));
    expect(fetches).toBe(2);
  });

  it('looks for a new key (a rotation) at most once per cooldown', async () => {
    const first = await newKey('k1');
    const second = await newKey('k2');
    published = [first];
    const verifier = createTokenVerifier({ jwksUrl });
    await verifier.verify(await sign(first));
    published = [first, second];
    // Within the cooldown an unknown key is refused without asking the server.
    await expect(verifier.verify(await sign(second))).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    expect(fetches).toBe(1);
    vi.setSystemTime(Date.now() + TOKEN_VERIFIER_DEFAULTS.cooldownMs + 1);
    await expect(verifier.verify(await sign(second))).resolves.toMatchObject({ sub: 'user-1' });
    expect(fetches).toBe(2);
  });

  it('gives up on a key-set fetch that takes longer than the fetch timeout', async () => {
    const key = await newKey('k1');
    published = [key];
    hang = true;
    const verifier = createTokenVerifier({ jwksUrl, fetchTimeoutMs: 200 });
    const started = performance.now();
    await expect(verifier.verify(await sign(key))).rejects.toMatchObject({ code: 'ERR_JWKS_TIMEOUT' });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('refuses a token signed with a shared secret instead of a published key', async () => {
    published = [await newKey('k1')];
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setSubject('user-1')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('x'.repeat(32)));
    await expect(createTokenVerifier({ jwksUrl }).verify(forged)).rejects.toMatchObject({ code: 'ERR_JOSE_ALG_NOT_ALLOWED' });
  });

  it('refuses a token without an expiry', async () => {
    const key = await newKey('k1');
    published = [key];
    const endless = await new SignJWT({}).setProtectedHeader({ alg: 'EdDSA', kid: 'k1' }).setSubject('user-1').sign(key.privateKey);
    await expect(createTokenVerifier({ jwksUrl }).verify(endless)).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'exp' });
  });
});
