import type { Database } from '../../db/database.js';
import { listPayments } from '../../payments/repository.js';
import type { StoredOrder } from './schema.js';

/** Polar's CustomerOrderPaymentStatus: how the order's payment stands, and why it failed when it did. */
export interface OrderPaymentStatus {
  status: 'pending' | 'succeeded' | 'failed';
  error: string | null;
}

/**
 * How an order's payment stands: its latest payment attempt (a renewal retried by dunning has several) as Polar
 * names payment statuses, with the processor's decline message when it failed. An order paid without a payment
 * (nothing to charge) has succeeded; one still waiting for its first attempt is pending.
 */
export async function orderPaymentStatus(db: Database, order: StoredOrder): Promise<OrderPaymentStatus> {
  const sorting = [{ column: 'created_at', order: 'desc' as const }];
  const [latest] = (await listPayments(db, { organizationIds: [order.organizationId], orderIds: [order.id] }, sorting, { page: 1, limit: 1 })).items;
  if (!latest) return { status: order.status === 'pending' ? 'pending' : 'succeeded', error: null };
  if (latest.status === 'succeeded') return { status: 'succeeded', error: null };
  if (latest.status === 'failed') return { status: 'failed', error: latest.declineMessage ?? 'The payment was declined.' };
  return { status: 'pending', error: null };
}
