import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

/** Key-set caching of a verifier (SPEC §9): fetch timeout, refetch cooldown and cache max age, in ms. */
export const TOKEN_VERIFIER_DEFAULTS = { fetchTimeoutMs: 5000, cooldownMs: 30_000, cacheMaxAgeMs: 600_000 } as const;

/** Algorithms Better Auth's jwt plugin signs with; anything else (HS256, none) is refused. */
const ALGORITHMS = ['EdDSA', 'ES256', 'ES512', 'PS256', 'RS256'];

export interface TokenVerifierOptions {
  /** Till's key set: `<base URL>/api/auth/jwks`. */
  jwksUrl: string | URL;
  /** Expected `iss`; Till sets its base URL (TILL_BASE_URL). Unchecked when omitted. */
  issuer?: string;
  /** Expected `aud`; Till sets its base URL (TILL_BASE_URL). Unchecked when omitted. */
  audience?: string | string[];
  /** How long one key-set fetch may take. */
  fetchTimeoutMs?: number;
  /** Least time between two fetches when a token names a key the cached set lacks. */
  cooldownMs?: number;
  /** Age after which the cached key set is fetched again before use. */
  cacheMaxAgeMs?: number;
}

/** The claims of a Till-issued token: `sub` is the user id, the rest is the user as Better Auth returns it. */
export interface TillTokenClaims extends JWTPayload {
  sub: string;
  email?: string;
  name?: string;
  emailVerified?: boolean;
  role?: string | null;
}

export interface TokenVerifier {
  /**
   * The token's claims when its signature, issuer, audience and lifetime check out; otherwise
   * throws jose's error (its `code` says why: ERR_JWT_EXPIRED, ERR_JWS_SIGNATURE_VERIFICATION_FAILED,
   * ERR_JWKS_NO_MATCHING_KEY, ERR_JWT_CLAIM_VALIDATION_FAILED, ERR_JWKS_TIMEOUT…).
   */
  verify(token: string): Promise<TillTokenClaims>;
}

/**
 * Verifies Till-issued tokens offline: the key set is fetched from Till once, cached, and fetched
 * again only when it is older than the cache max age or a token names an unknown key (a rotation).
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const { fetchTimeoutMs, cooldownMs, cacheMaxAgeMs } = { ...TOKEN_VERIFIER_DEFAULTS, ...definedOnly(options) };
  const keys = createRemoteJWKSet(new URL(options.jwksUrl), {
    timeoutDuration: fetchTimeoutMs,
    cooldownDuration: cooldownMs,
    cacheMaxAge: cacheMaxAgeMs,
  });
  return {
    async verify(token) {
      const { payload } = await jwtVerify(token, keys, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: ALGORITHMS,
        requiredClaims: ['sub', 'exp'],
      });
      return payload as TillTokenClaims;
    },
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
