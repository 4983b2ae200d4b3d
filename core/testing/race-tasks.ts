/**
 * Contested operations that race tests (core/testing/race.ts) run in worker threads, each on a connection pool of its
 * own. Inputs and answers cross threads, so both are plain data.
 */
import { fixedClock } from '../clock.js';
import type { Database } from '../db/database.js';
import { applyRefundedAmounts, findOrder } from '../billing/orders/repository.js';
import { refundTaxFor, statusAfterRefunds } from '../billing/orders/schema.js';
import { claimRedemption } from '../billing/discounts/repository.js';
import { runDueJobs, type JobHandlers } from '../jobs/jobs.js';
import type { PaymentProcessor } from '../payments/processor.js';

const busy = (error: unknown) => /SQLITE_BUSY|database is locked/.test(String(error));

/**
 * Refund claims of `amount` on one order, one after another, as the refund service makes them (read the order, then
 * the guarded compare-and-set), until the order has less than `amount` left. Answers how many were granted.
 */
export async function claimRefunds(db: Database, input: { orderId: string; organizationId: string; amount: number }): Promise<number> {
  let granted = 0;
  for (;;) {
    try {
      const outcome = await db.transaction(async (trx) => {
        const order = (await findOrder(trx, input.orderId, [input.organizationId]))!;
        if (input.amount > order.netAmount - order.refundedAmount) return 'used up' as const;
        const status = statusAfterRefunds(order, order.refundedAmount + input.amount);
        return applyRefundedAmounts(trx, order, { amount: input.amount, taxAmount: refundTaxFor(order, input.amount), status }, new Date());
      });
      if (outcome === 'used up') return granted;
      if (outcome) granted++;
    } catch (error) {
      // Separate SQLite connections: a writer whose read another commit overtook is told the database is busy. It
      // claimed nothing, and tries again.
      if (!busy(error)) throw error;
    }
  }
}

/** `count` redemption claims on one discount, each in its own transaction. Answers how many were granted. */
export async function claimRedemptions(db: Database, input: { discountId: string; count: number }): Promise<number> {
  let granted = 0;
  for (let i = 0; i < input.count; i++) {
    if (await db.transaction((trx) => claimRedemption(trx, input.discountId))) granted++;
  }
  return granted;
}

/** A job runner, as a daemon runs it, at `now`; each job's handler records its subject. Answers the subjects run. */
export async function runJobs(db: Database, input: { now: string }): Promise<string[]> {
  const ran: string[] = [];
  const handlers: JobHandlers = {
    'test.count': async (_ctx, job) => {
      ran.push(job.subjectId);
      // Long enough for the other runners to reach for the same jobs meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 2));
    },
  };
  const count = await runDueJobs({ db, clock: fixedClock(new Date(input.now)), payments: {} as PaymentProcessor, baseUrl: 'http://till.test', handlers });
  if (count !== ran.length) throw new Error(`runDueJobs answered ${count} but ran ${ran.length}`);
  return ran;
}
