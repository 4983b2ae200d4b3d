import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { CoreError } from '../errors.js';
import { deleteClaim, deleteExpired, findRecord, insertClaim, retakeClaim, storeAnswer, type NewClaim } from './repository.js';

/** How long a key's first answer is kept and replayed (Stripe: 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How long a key may stay running before another request may retake it. A request that fails with a 5xx
 * releases its key at once; this only covers a daemon that died mid-request (its key would otherwise stay
 * locked until it expired).
 */
export const IDEMPOTENCY_LOCK_MS = 60 * 1000;

/** Longest key accepted (Stripe's limit). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

export interface IdempotentRequest {
  /** Whose keys these are: the organization of an access token, or a signed-in user. */
  scope: string;
  key: string;
  /** Hash of method, path and body: a repeat must match it. */
  fingerprint: string;
  method: string;
  path: string;
}

/** What a request with a key does: run (holding the claim) or replay a stored answer. */
export type IdempotencyOutcome =
  | { kind: 'claimed'; scope: string; key: string; token: string }
  | { kind: 'replay'; status: number; responseBody: string | null };

export type Claim = Extract<IdempotencyOutcome, { kind: 'claimed' }>;

const headerIssue = (msg: string, type: string) => [{ loc: ['header', 'idempotency-key'], msg, type }];

/**
 * Claims the key for this request, or finds the answer to replay. The same key with another request is
 * refused (422), one still running elsewhere is a conflict (409); an expired key, or one left running past
 * IDEMPOTENCY_LOCK_MS, is taken over by a guarded update so that exactly one request wins it.
 */
export async function claimIdempotencyKey(db: Database, clock: Clock, request: IdempotentRequest): Promise<IdempotencyOutcome> {
  if (request.key.length === 0 || request.key.length > IDEMPOTENCY_KEY_MAX_LENGTH || !/^[\x21-\x7e]+$/.test(request.key)) {
    throw new CoreError('invalid', 'INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1 to 255 visible ASCII characters', headerIssue('1 to 255 visible ASCII characters', 'value_error'));
  }
  // A few rounds: between a failed insert and the read, the holder may release or complete the key.
  for (let round = 0; round < 5; round++) {
    const nowMs = clock.now().getTime();
    const claim: NewClaim = { ...request, token: randomUUID(), nowMs, expiresAtMs: nowMs + IDEMPOTENCY_TTL_MS };
    if (await insertClaim(db, claim)) return { kind: 'claimed', scope: request.scope, key: request.key, token: claim.token };
    const record = await findRecord(db, request.scope, request.key);
    if (!record) continue;
    const stale = record.expiresAtMs <= nowMs || (record.state === 'running' && record.lockedAtMs <= nowMs - IDEMPOTENCY_LOCK_MS);
    if (stale) {
      if (await retakeClaim(db, record.token, claim)) return { kind: 'claimed', scope: request.scope, key: request.key, token: claim.token };
      continue;
    }
    if (record.fingerprint !== request.fingerprint) {
      throw new CoreError(
        'invalid',
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was used with another request (method, path or body); use a new key for a new request',
        headerIssue('Key already used with another request', 'idempotency_key_reused'),
      );
    }
    if (record.state === 'running') {
      throw new CoreError('conflict', 'IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still running; retry once it has finished');
    }
    return { kind: 'replay', status: record.status ?? 200, responseBody: record.responseBody };
  }
  throw new CoreError('conflict', 'IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still running; retry once it has finished');
}

/** Keeps the first answer (status and JSON body, or null for none) for replays. */
export async function completeIdempotencyKey(db: Database, claim: Claim, status: number, responseBody: string | null): Promise<void> {
  await storeAnswer(db, claim.scope, claim.key, claim.token, status, responseBody);
}

/** Lets the key go without an answer (a 5xx, a conflict): the next request with it runs anew. */
export async function releaseIdempotencyKey(db: Database, claim: Claim): Promise<void> {
  await deleteClaim(db, claim.scope, claim.key, claim.token);
}

/** Deletes the keys older than IDEMPOTENCY_TTL_MS; answers how many. */
export async function purgeExpiredIdempotencyKeys(db: Database, clock: Clock): Promise<number> {
  return deleteExpired(db, clock.now().getTime());
}

/** Purges expired keys now and then every `intervalMs` until stopped (each daemon; deletes are harmless to repeat). */
export function startIdempotencyPurge(db: Database, clock: Clock, options: { intervalMs?: number; onError?: (error: unknown) => void } = {}): { stop(): Promise<void> } {
  const intervalMs = options.intervalMs ?? 10 * 60 * 1000;
  let running: Promise<unknown> | undefined;
  const tick = () => {
    running ??= purgeExpiredIdempotencyKeys(db, clock)
      .catch((error) => options.onError?.(error))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
