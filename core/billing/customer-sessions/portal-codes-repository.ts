import { fromDbInt, fromDbTime, fromDbTimeOrNull, toDbTime } from '../../db/columns.js';
import { dialectOf, type Executor } from '../../db/database.js';

const TABLE = 'customer_portal_codes';

export interface PortalCode {
  id: string;
  organizationId: string;
  emailLower: string;
  codeHash: string;
  attempts: number;
  expiresAt: Date;
  usedAt: Date | null;
  createdAt: Date;
}

const toCode = (row: Record<string, unknown>): PortalCode => ({
  id: String(row.id),
  organizationId: String(row.organization_id),
  emailLower: String(row.email_lower),
  codeHash: String(row.code_hash),
  attempts: fromDbInt(row.attempts),
  expiresAt: fromDbTime(row.expires_at),
  usedAt: fromDbTimeOrNull(row.used_at),
  createdAt: fromDbTime(row.created_at),
});

/**
 * Serializes the code requests of one address of an organization, and of one IP, until the transaction ends, so the
 * count of recent codes and the insert of a new one are one step (PostgreSQL: advisory locks, always the address's
 * first, so two requests never wait on each other crosswise). SQLite's single writer connection already serializes
 * the transactions of a daemon.
 */
export async function lockCodeRequests(trx: Executor, organizationId: string, emailLower: string, ipHash: string): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`portal-code:email:${organizationId}:${emailLower}`]);
  await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`portal-code:ip:${ipHash}`]);
}

/** How many codes were asked for since `since`: for one address of one organization, and from one IP (any organization). */
export async function countRecentCodes(db: Executor, organizationId: string, emailLower: string, ipHash: string, since: Date): Promise<{ byEmail: number; byIp: number }> {
  const count = async (query: ReturnType<Executor>) => Number(((await query.count<{ count: number | string }[]>({ count: '*' }))[0]?.count) ?? 0);
  const [byEmail, byIp] = await Promise.all([
    count(db(TABLE).where({ organization_id: organizationId, email_lower: emailLower }).where('created_at', '>', toDbTime(since))),
    count(db(TABLE).where({ ip_hash: ipHash }).where('created_at', '>', toDbTime(since))),
  ]);
  return { byEmail, byIp };
}

/** A new code for the address; earlier unused ones stop working (only the newest mail's code signs in). */
export async function insertCode(trx: Executor, code: PortalCode & { ipHash: string }): Promise<void> {
  await trx(TABLE).where({ organization_id: code.organizationId, email_lower: code.emailLower }).whereNull('used_at').update({ used_at: toDbTime(code.createdAt) });
  await trx(TABLE).insert({
    id: code.id,
    organization_id: code.organizationId,
    email_lower: code.emailLower,
    code_hash: code.codeHash,
    ip_hash: code.ipHash,
    attempts: 0,
    expires_at: toDbTime(code.expiresAt),
    used_at: null,
    created_at: toDbTime(code.createdAt),
  });
}

/** The newest unused, unexpired code of the address. */
export async function findLiveCode(db: Executor, organizationId: string, emailLower: string, now: Date): Promise<PortalCode | undefined> {
  const row = await db(TABLE)
    .where({ organization_id: organizationId, email_lower: emailLower })
    .whereNull('used_at')
    .where('expires_at', '>', toDbTime(now))
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .first();
  return row ? toCode(row) : undefined;
}

/** Counts a wrong guess, unless the code was used meanwhile; answers the attempts made so far. */
export async function recordWrongAttempt(db: Executor, code: PortalCode): Promise<void> {
  await db(TABLE).where({ id: code.id }).whereNull('used_at').increment('attempts', 1);
}

/** Claims the code: true for exactly one caller, and only while it is unused and under the attempt limit. */
export async function claimCode(db: Executor, code: PortalCode, now: Date, maxAttempts: number): Promise<boolean> {
  const updated = await db(TABLE).where({ id: code.id }).whereNull('used_at').where('attempts', '<', maxAttempts).update({ used_at: toDbTime(now) });
  return Number(updated) === 1;
}

/** Codes that expired before `before` are of no use (not even for rate limits, which look back minutes). */
export async function deleteExpiredCodes(db: Executor, before: Date): Promise<void> {
  await db(TABLE).where('expires_at', '<', toDbTime(before)).del();
}
