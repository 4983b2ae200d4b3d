import { fromDbBool, fromDbInt, fromDbTime, toDbTime } from '../db/columns.js';
import type { Executor } from '../db/database.js';

/**
 * The sandbox processor's own books: every intent and refund it accepted, by idempotency key. Written with the
 * pool, never inside one of the daemon's transactions, so like a real processor's they survive a crash of tilld
 * (the crash test reads them as the processor's ledger).
 */
export type SandboxIntentStatus = 'succeeded' | 'failed' | 'requires_action' | 'processing';
export type SandboxRefundStatus = 'succeeded' | 'failed' | 'pending';

export interface SandboxIntent {
  id: string;
  idempotencyKey: string;
  paymentId: string;
  methodId: string;
  amount: number;
  currency: string;
  offSession: boolean;
  status: SandboxIntentStatus;
  declineCode: string | null;
  returnUrl: string | null;
  calls: number;
  createdAt: Date;
}

export interface SandboxRefund {
  id: string;
  idempotencyKey: string;
  intentId: string;
  amount: number;
  status: SandboxRefundStatus;
  failureReason: string | null;
  calls: number;
  createdAt: Date;
}

const toIntent = (row: Record<string, unknown>): SandboxIntent => ({
  id: String(row.id),
  idempotencyKey: String(row.idempotency_key),
  paymentId: String(row.payment_id),
  methodId: String(row.method_id),
  amount: fromDbInt(row.amount),
  currency: String(row.currency),
  offSession: fromDbBool(row.off_session),
  status: row.status as SandboxIntentStatus,
  declineCode: (row.decline_code as string | null) ?? null,
  returnUrl: (row.return_url as string | null) ?? null,
  calls: fromDbInt(row.calls),
  createdAt: fromDbTime(row.created_at),
});

const toRefund = (row: Record<string, unknown>): SandboxRefund => ({
  id: String(row.id),
  idempotencyKey: String(row.idempotency_key),
  intentId: String(row.intent_id),
  amount: fromDbInt(row.amount),
  status: row.status as SandboxRefundStatus,
  failureReason: (row.failure_reason as string | null) ?? null,
  calls: fromDbInt(row.calls),
  createdAt: fromDbTime(row.created_at),
});

/** Records an intent once per key and counts the call; answers the stored intent (the first call's, on a replay). */
export async function recordSandboxIntent(db: Executor, intent: Omit<SandboxIntent, 'calls'>): Promise<SandboxIntent> {
  const inserted = await db('sandbox_intents')
    .insert({
      id: intent.id,
      idempotency_key: intent.idempotencyKey,
      payment_id: intent.paymentId,
      method_id: intent.methodId,
      amount: intent.amount,
      currency: intent.currency,
      off_session: intent.offSession,
      status: intent.status,
      decline_code: intent.declineCode,
      return_url: intent.returnUrl,
      calls: 1,
      created_at: toDbTime(intent.createdAt),
    })
    .onConflict('idempotency_key')
    .ignore()
    .returning('id');
  if (inserted.length === 0) await db('sandbox_intents').where({ idempotency_key: intent.idempotencyKey }).increment('calls', 1);
  return (await findSandboxIntent(db, { idempotencyKey: intent.idempotencyKey }))!;
}

export async function findSandboxIntent(db: Executor, by: { id: string } | { idempotencyKey: string }): Promise<SandboxIntent | undefined> {
  const row = await db('sandbox_intents').where('id' in by ? { id: by.id } : { idempotency_key: by.idempotencyKey }).first();
  return row ? toIntent(row) : undefined;
}

/** Moves an intent on, guarded on the status it was read in (an intent settles once). */
export async function updateSandboxIntent(db: Executor, id: string, from: SandboxIntentStatus, to: { status: SandboxIntentStatus; declineCode: string | null }): Promise<boolean> {
  return (await db('sandbox_intents').where({ id, status: from }).update({ status: to.status, decline_code: to.declineCode })) > 0;
}

export async function recordSandboxRefund(db: Executor, refund: Omit<SandboxRefund, 'calls'>): Promise<SandboxRefund> {
  const inserted = await db('sandbox_refunds')
    .insert({
      id: refund.id,
      idempotency_key: refund.idempotencyKey,
      intent_id: refund.intentId,
      amount: refund.amount,
      status: refund.status,
      failure_reason: refund.failureReason,
      calls: 1,
      created_at: toDbTime(refund.createdAt),
    })
    .onConflict('idempotency_key')
    .ignore()
    .returning('id');
  if (inserted.length === 0) await db('sandbox_refunds').where({ idempotency_key: refund.idempotencyKey }).increment('calls', 1);
  return (await findSandboxRefund(db, refund.idempotencyKey))!;
}

export async function findSandboxRefund(db: Executor, idempotencyKey: string): Promise<SandboxRefund | undefined> {
  const row = await db('sandbox_refunds').where({ idempotency_key: idempotencyKey }).first();
  return row ? toRefund(row) : undefined;
}

/** What is already refunded (or on its way) of an intent: failed refunds gave theirs back. */
export async function refundedOfSandboxIntent(db: Executor, intentId: string): Promise<number> {
  const [{ total }] = await db('sandbox_refunds').where({ intent_id: intentId }).whereNot({ status: 'failed' }).sum<{ total: number | string | null }[]>({ total: 'amount' });
  return total === null ? 0 : Number(total);
}

export async function updateSandboxRefund(db: Executor, id: string, from: SandboxRefundStatus, to: { status: SandboxRefundStatus; failureReason: string | null }): Promise<boolean> {
  return (await db('sandbox_refunds').where({ id, status: from }).update({ status: to.status, failure_reason: to.failureReason })) > 0;
}
