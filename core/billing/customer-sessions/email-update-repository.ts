import { fromDbTime, fromDbTimeOrNull, toDbTime } from '../../db/columns.js';
import { dialectOf, type Executor } from '../../db/database.js';

const TABLE = 'customer_email_updates';

export interface EmailUpdate {
  id: string;
  organizationId: string;
  customerId: string;
  email: string;
  expiresAt: Date;
  usedAt: Date | null;
  createdAt: Date;
}

const toUpdate = (row: Record<string, unknown>): EmailUpdate => ({
  id: String(row.id),
  organizationId: String(row.organization_id),
  customerId: String(row.customer_id),
  email: String(row.email),
  expiresAt: fromDbTime(row.expires_at),
  usedAt: fromDbTimeOrNull(row.used_at),
  createdAt: fromDbTime(row.created_at),
});

/** Serializes a customer's requests until the transaction ends, so the rate limit's count and the insert are one step. */
export async function lockEmailUpdates(trx: Executor, customerId: string): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`email-update:${customerId}`]);
}

/** How many updates the customer asked for since `since`. */
export async function countRecentEmailUpdates(db: Executor, customerId: string, since: Date): Promise<number> {
  const [row] = await db(TABLE).where({ customer_id: customerId }).where('created_at', '>', toDbTime(since)).count<{ count: number | string }[]>({ count: '*' });
  return Number(row?.count ?? 0);
}

/** A new pending update; the customer's earlier unused ones stop working (only the newest mail's link does). */
export async function insertEmailUpdate(trx: Executor, update: EmailUpdate & { tokenHash: string }): Promise<void> {
  await trx(TABLE).where({ customer_id: update.customerId }).whereNull('used_at').update({ used_at: toDbTime(update.createdAt) });
  await trx(TABLE).insert({
    id: update.id,
    organization_id: update.organizationId,
    customer_id: update.customerId,
    email: update.email,
    token_hash: update.tokenHash,
    expires_at: toDbTime(update.expiresAt),
    used_at: null,
    created_at: toDbTime(update.createdAt),
  });
}

/** The unused, unexpired update a token names. */
export async function findLiveEmailUpdate(db: Executor, tokenHash: string, now: Date): Promise<EmailUpdate | undefined> {
  const row = await db(TABLE).where({ token_hash: tokenHash }).whereNull('used_at').where('expires_at', '>', toDbTime(now)).first();
  return row ? toUpdate(row) : undefined;
}

/** Uses the update: true for exactly one caller. */
export async function claimEmailUpdate(trx: Executor, id: string, now: Date): Promise<boolean> {
  return Number(await trx(TABLE).where({ id }).whereNull('used_at').update({ used_at: toDbTime(now) })) === 1;
}

/** Updates long expired are of no use, not even to the rate limit. */
export async function deleteExpiredEmailUpdates(db: Executor, before: Date): Promise<void> {
  await db(TABLE).where('expires_at', '<', toDbTime(before)).del();
}
