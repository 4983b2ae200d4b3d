import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../../db/database.js';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import { CoreError } from '../../errors.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { Scope } from '../shared/scopes.js';
import {
  deleteAccessToken as deleteRow,
  findAccessToken,
  findAccessTokenByHash,
  insertAccessToken,
  listAccessTokens as listRows,
  touchAccessToken,
  updateAccessToken as updateRow,
} from './repository.js';
import { findOrganization } from '../organizations/repository.js';
import { cachedToken, forgetAccessTokens, rememberToken, tokenCacheGeneration } from './cache.js';
import type { Organization } from '../organizations/schema.js';
import { durationSeconds, type AccessToken, type AccessTokenCreate, type AccessTokenUpdate } from './schema.js';

/** Every organization access token starts with this, so it can be told from a session token at a glance. */
export const ACCESS_TOKEN_PREFIX = 'till_oat_';

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
const notFound = () => new CoreError('not_found', 'ACCESS_TOKEN_NOT_FOUND', 'Organization access token not found');

/** last_used_at is kept to the minute: a token read more often is not written again (touchAccessToken guards the same). */
const TOUCH_EVERY_MS = 60_000;

/**
 * The token a Bearer header names, if it is live; marks it used. A token verified within ACCESS_TOKEN_CACHE_MS is
 * taken from memory (cache.ts: revoking or changing it here forgets it at once); its expiry is checked every time.
 */
export async function authenticateAccessToken(db: Database, clock: Clock, token: string): Promise<AccessToken | undefined> {
  const tokenHash = hashToken(token);
  let found = cachedToken(tokenHash);
  if (!found) {
    const readGeneration = tokenCacheGeneration();
    const readAt = performance.now();
    found = await findAccessTokenByHash(db, tokenHash);
    if (found) rememberToken(tokenHash, found, readGeneration, readAt);
  }
  const now = clock.now();
  if (!found || (found.expiresAt && found.expiresAt <= now)) return undefined;
  // An UPDATE that changes nothing still takes SQLite's write lock (and a round trip on PostgreSQL) on every read
  // made with the token: skip it when the token was marked used within the minute. The cached copy notes the time
  // first, so the requests arriving meanwhile do not all write it.
  if (!found.lastUsedAt || now.getTime() - found.lastUsedAt.getTime() >= TOUCH_EVERY_MS) {
    found.lastUsedAt = now;
    await touchAccessToken(db, found.id, now);
  }
  return found;
}

/** Mints a token for one organization; the token itself is in the answer only, never stored. */
export async function createAccessToken(
  db: Database,
  clock: Clock,
  input: { organizationId: string; createdByUserId: string; request: AccessTokenCreate },
): Promise<{ accessToken: AccessToken; token: string }> {
  const now = clock.now();
  const token = `${ACCESS_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const accessToken: AccessToken = {
    id: newId(),
    organizationId: input.organizationId,
    comment: input.request.comment,
    scopes: input.request.scopes as Scope[],
    expiresAt: input.request.expires_in ? new Date(now.getTime() + durationSeconds(input.request.expires_in) * 1000) : null,
    lastUsedAt: null,
    createdAt: now,
    modifiedAt: null,
  };
  await insertAccessToken(db, { ...accessToken, tokenHash: hashToken(token), createdByUserId: input.createdByUserId });
  return { accessToken, token };
}

export function listAccessTokens(db: Database, organizationIds: readonly string[], sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<AccessToken>> {
  return listRows(db, organizationIds, sorting, page);
}

export async function updateAccessToken(db: Database, clock: Clock, organizationIds: readonly string[], id: string, input: AccessTokenUpdate): Promise<AccessToken> {
  // Forgotten once committed (and a lookup racing with the change is not cached: the generation moved on), so the
  // new scopes hold from the next request on.
  try {
    return await changeAccessToken(db, clock, organizationIds, id, input);
  } finally {
    forgetAccessTokens({ tokenId: id });
  }
}

function changeAccessToken(db: Database, clock: Clock, organizationIds: readonly string[], id: string, input: AccessTokenUpdate): Promise<AccessToken> {
  return db.transaction(async (trx) => {
    const current = await findAccessToken(trx, id, organizationIds);
    if (!current) throw notFound();
    const next = { ...current, comment: input.comment ?? current.comment, scopes: (input.scopes as Scope[] | null | undefined) ?? current.scopes, modifiedAt: clock.now() };
    await updateRow(trx, id, { comment: next.comment, scopes: next.scopes, modifiedAt: next.modifiedAt });
    return next;
  });
}

export async function deleteAccessToken(db: Database, clock: Clock, organizationIds: readonly string[], id: string): Promise<void> {
  const deleted = await deleteRow(db, id, organizationIds, clock.now());
  // Revoked here: refused from the next request on, cached or not.
  forgetAccessTokens({ tokenId: id });
  if (!deleted) throw notFound();
}

/**
 * The token a caller authenticated with, and its organization: what `till whoami` shows for TILL_TOKEN. It needs
 * no scope: a token may always learn its own organization, scopes and expiry (as `gh auth status` does for GH_TOKEN).
 */
export async function describeAccessToken(db: Database, tokenId: string, organizationId: string): Promise<{ accessToken: AccessToken; organization: Organization }> {
  const [accessToken, organization] = await Promise.all([findAccessToken(db, tokenId, [organizationId]), findOrganization(db, organizationId)]);
  if (!accessToken || !organization) throw notFound();
  return { accessToken, organization };
}
