import type { AccessToken } from './schema.js';

/**
 * How long a verified access token is believed without asking the database again. A token revoked, changed or
 * deleted through this process (its DELETE or PATCH, its organization's deletion) is forgotten at once; one revoked
 * by another daemon sharing the PostgreSQL database (or a row changed by hand) stops working here within this bound.
 */
export const ACCESS_TOKEN_CACHE_MS = 2_000;

/** Entries kept at most; past this the oldest is dropped (a flood of distinct valid tokens cannot grow memory). */
const MAX_ENTRIES = 10_000;

interface Entry {
  token: AccessToken;
  /** performance.now() when read from the database. */
  readAt: number;
}

/**
 * Verified tokens of this process, by the SHA-256 of the token (as the database keeps them: no token in memory
 * either). One cache per process: token ids, hashes and organization ids are unique across databases, so tests
 * running several databases in one process cannot mix them up, and a revocation forgets the token whichever app
 * it came through.
 */
const entries = new Map<string, Entry>();
/** Bumped by every forget: a lookup that raced with one does not put back what was just forgotten. */
let generation = 0;

export const tokenCacheGeneration = () => generation;

/** The token verified under this hash within ACCESS_TOKEN_CACHE_MS, if any. */
export function cachedToken(tokenHash: string, now = performance.now()): AccessToken | undefined {
  const entry = entries.get(tokenHash);
  if (!entry) return undefined;
  if (now - entry.readAt >= ACCESS_TOKEN_CACHE_MS) {
    entries.delete(tokenHash);
    return undefined;
  }
  return entry.token;
}

/** Keeps a token just read from the database, unless a forget happened since `readGeneration` (the read may be stale). */
export function rememberToken(tokenHash: string, token: AccessToken, readGeneration: number, readAt: number) {
  if (readGeneration !== generation) return;
  if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  entries.set(tokenHash, { token, readAt });
}

/** Forgets the tokens matching (one token by id, or every token of an organization), or every token. */
export function forgetAccessTokens(match?: { tokenId?: string; organizationId?: string }) {
  generation++;
  if (!match) {
    entries.clear();
    return;
  }
  for (const [hash, { token }] of entries) {
    if (token.id === match.tokenId || token.organizationId === match.organizationId) entries.delete(hash);
  }
}
