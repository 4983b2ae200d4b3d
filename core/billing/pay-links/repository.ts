import type { Executor } from '../../db/database.js';
import { fromDbTime, toDbTime } from '../../db/columns.js';

const TABLE = 'pay_links';

/** A link that lets a customer pay one owed order of a subscription on-session; only its token's hash is kept. */
export interface PayLink {
  id: string;
  organizationId: string;
  customerId: string;
  subscriptionId: string;
  orderId: string;
  /** The declined try whose mail carried the link. */
  failedPaymentId: string | null;
  expiresAt: Date;
  createdAt: Date;
}

const toPayLink = (row: Record<string, unknown>): PayLink => ({
  id: String(row.id),
  organizationId: String(row.organization_id),
  customerId: String(row.customer_id),
  subscriptionId: String(row.subscription_id),
  orderId: String(row.order_id),
  failedPaymentId: (row.failed_payment_id as string | null) ?? null,
  expiresAt: fromDbTime(row.expires_at),
  createdAt: fromDbTime(row.created_at),
});

export async function insertPayLink(trx: Executor, link: PayLink, tokenHash: string): Promise<void> {
  await trx(TABLE).insert({
    id: link.id,
    organization_id: link.organizationId,
    customer_id: link.customerId,
    subscription_id: link.subscriptionId,
    order_id: link.orderId,
    failed_payment_id: link.failedPaymentId,
    token_hash: tokenHash,
    expires_at: toDbTime(link.expiresAt),
    created_at: toDbTime(link.createdAt),
  });
}

export async function findPayLinkByTokenHash(db: Executor, tokenHash: string): Promise<PayLink | undefined> {
  const row = await db(TABLE).where({ token_hash: tokenHash }).first();
  return row ? toPayLink(row) : undefined;
}

/** The link mailed for a declined try, if its mail was made already. */
export async function findPayLinkOfFailedPayment(db: Executor, paymentId: string): Promise<PayLink | undefined> {
  const row = await db(TABLE).where({ failed_payment_id: paymentId }).first();
  return row ? toPayLink(row) : undefined;
}

/** The links made for an order, oldest first. */
export async function findPayLinksOfOrder(db: Executor, orderId: string): Promise<PayLink[]> {
  const rows = await db(TABLE).where({ order_id: orderId }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(toPayLink);
}
