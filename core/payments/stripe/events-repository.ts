import { fromDbTimeOrNull, toDbTime } from '../../db/columns.js';
import type { Executor } from '../../db/database.js';

/** Notes a Stripe event as received (a repeat notes nothing); answers whether it was already processed. */
export async function receiveStripeEvent(db: Executor, event: { id: string; type: string }, at: Date): Promise<{ processed: boolean }> {
  await db('stripe_events').insert({ id: event.id, type: event.type, received_at: toDbTime(at), processed_at: null }).onConflict('id').ignore();
  const row = await db('stripe_events').where({ id: event.id }).first();
  return { processed: fromDbTimeOrNull(row?.processed_at) !== null };
}

/** Marks a Stripe event processed: later deliveries of it are answered without acting again. */
export async function markStripeEventProcessed(db: Executor, id: string, at: Date): Promise<void> {
  await db('stripe_events').where({ id }).whereNull('processed_at').update({ processed_at: toDbTime(at) });
}
