import type { Executor } from '../db/database.js';
import { fromDbInt, toDbTime } from '../db/columns.js';

const TABLE = 'idempotency_keys';

/** A stored key: still running (claimed, no answer yet) or done (holding the first answer). */
export interface IdempotencyRecord {
  scope: string;
  key: string;
  fingerprint: string;
  state: 'running' | 'done';
  token: string;
  status: number | null;
  responseBody: string | null;
  lockedAtMs: number;
  expiresAtMs: number;
}

export interface NewClaim {
  scope: string;
  key: string;
  fingerprint: string;
  method: string;
  path: string;
  token: string;
  nowMs: number;
  expiresAtMs: number;
}

/** The columns of a running key as `claim` holds it (a new key, or one retaken). */
const runningRow = (claim: NewClaim) => ({
  fingerprint: claim.fingerprint,
  method: claim.method,
  path: claim.path,
  state: 'running',
  token: claim.token,
  status: null,
  response_body: null,
  locked_at_ms: claim.nowMs,
  expires_at_ms: claim.expiresAtMs,
  created_at: toDbTime(new Date(claim.nowMs)),
});

/** Inserts a running key unless one exists (scope, key); answers whether this insert made it. */
export async function insertClaim(db: Executor, claim: NewClaim): Promise<boolean> {
  const rows = await db(TABLE)
    .insert({ scope: claim.scope, key: claim.key, ...runningRow(claim) })
    .onConflict(['scope', 'key'])
    .ignore()
    .returning('token');
  return rows.length === 1;
}

/** Takes over a stale key (expired, or running past its lock) only if nobody else did since `seenToken` was read. */
export async function retakeClaim(db: Executor, seenToken: string, claim: NewClaim): Promise<boolean> {
  const count = await db(TABLE).where({ scope: claim.scope, key: claim.key, token: seenToken }).update(runningRow(claim));
  return count === 1;
}

export async function findRecord(db: Executor, scope: string, key: string): Promise<IdempotencyRecord | undefined> {
  const row = await db(TABLE).where({ scope, key }).first();
  if (!row) return undefined;
  return {
    scope: String(row.scope),
    key: String(row.key),
    fingerprint: String(row.fingerprint),
    state: row.state === 'done' ? 'done' : 'running',
    token: String(row.token),
    status: row.status === null || row.status === undefined ? null : fromDbInt(row.status),
    responseBody: row.response_body === null || row.response_body === undefined ? null : String(row.response_body),
    lockedAtMs: fromDbInt(row.locked_at_ms),
    expiresAtMs: fromDbInt(row.expires_at_ms),
  };
}

/** Stores the answer of the holder of `token`; a key retaken meanwhile is left to its new holder. */
export async function storeAnswer(db: Executor, scope: string, key: string, token: string, status: number, responseBody: string | null): Promise<void> {
  await db(TABLE).where({ scope, key, token, state: 'running' }).update({ state: 'done', status, response_body: responseBody });
}

/** Drops a running key of the holder of `token`, so a retry runs the request again. */
export async function deleteClaim(db: Executor, scope: string, key: string, token: string): Promise<void> {
  await db(TABLE).where({ scope, key, token, state: 'running' }).delete();
}

/** Deletes every key expired by `nowMs`; answers how many went. */
export async function deleteExpired(db: Executor, nowMs: number): Promise<number> {
  return db(TABLE).where('expires_at_ms', '<=', nowMs).delete();
}
