import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../../testing/database.js';
import { race } from '../../testing/race.js';
import { applyRefundedAmounts, findOrder } from './repository.js';
import { refundTaxFor, statusAfterRefunds } from './schema.js';
import { createOrder } from './service.js';

let database: TestDatabase;
let organizationId: string;
let customerId: string;
const clock = { now: () => new Date() };

async function paidOrder(net: number, tax: number): Promise<string> {
  const { id } = await database.db.transaction((trx) =>
    createOrder(trx, clock, {
      organizationId, customerId, productId: null, subscriptionId: null, checkoutId: null, billingReason: 'purchase', currency: 'usd',
      items: [{ label: 'Item', amount: net, taxAmount: tax, proration: false, productPriceId: null }], subtotalAmount: net, discountAmount: 0, discountId: null,
      netAmount: net, taxAmount: tax, totalAmount: net + tax, status: 'paid', paymentId: null, billingName: null, billingAddress: null, metadata: {}, customFieldData: {},
    }),
  );
  return id;
}

/** One refund claim as the refund service makes it: read the order, then the guarded compare-and-set. */
async function claim(db: Database, orderId: string, amount: number): Promise<boolean> {
  try {
    return await db.transaction(async (trx) => {
      const order = (await findOrder(trx, orderId, [organizationId]))!;
      if (amount > order.netAmount - order.refundedAmount) return false;
      const status = statusAfterRefunds(order, order.refundedAmount + amount);
      return applyRefundedAmounts(trx, order, { amount, taxAmount: refundTaxFor(order, amount), status }, new Date());
    });
  } catch (error) {
    // Separate SQLite connections: a writer that loses the race is told the database is busy. It claimed nothing.
    if (/SQLITE_BUSY|database is locked/.test(String(error))) return false;
    throw error;
  }
}

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateToLatest(database.db);
  organizationId = newId();
  await database.db('organization').insert({ id: organizationId, name: 'Claims', slug: `claims-${organizationId}`, createdAt: new Date().toISOString() });
  customerId = newId();
  await database.db('customers').insert({ id: customerId, organization_id: organizationId, email: 'c@example.com', email_lower: 'c@example.com', email_verified: false, type: 'individual', metadata: '{}', created_at: new Date().toISOString() });
});
afterAll(async () => {
  await database?.destroy();
});

describe('refund claims on an order', () => {
  it('never lets racing claims on separate connections refund more than the net amount, nor lose one', async () => {
    const id = await paidOrder(1000, 250);
    // Four workers, each with its own connection, claim 70 at a time from one starting gate until the order is used up.
    const granted = (await race(database.config, 'claimRefunds', Array.from({ length: 4 }, () => ({ orderId: id, organizationId, amount: 70 })))).reduce((a, b) => a + b, 0);
    const order = (await findOrder(database.db, id, [organizationId]))!;
    expect(granted).toBe(14);
    expect(order.refundedAmount).toBe(granted * 70);
    expect(order.refundedAmount).toBeLessThanOrEqual(order.netAmount);
    expect(order.status).toBe('partially_refunded');
    expect(order.refundedTaxAmount).toBeLessThanOrEqual(order.taxAmount);
  });

  it('refuses a claim made from a stale read, and one that would pass the net amount', async () => {
    const id = await paidOrder(500, 0);
    const stale = (await findOrder(database.db, id, [organizationId]))!;
    expect(await claim(database.db, id, 200)).toBe(true);
    expect(await database.db.transaction((trx) => applyRefundedAmounts(trx, stale, { amount: 100, taxAmount: 0, status: 'partially_refunded' }, new Date()))).toBe(false);
    const fresh = (await findOrder(database.db, id, [organizationId]))!;
    expect(await database.db.transaction((trx) => applyRefundedAmounts(trx, fresh, { amount: 301, taxAmount: 0, status: 'refunded' }, new Date()))).toBe(false);
    expect(await database.db.transaction((trx) => applyRefundedAmounts(trx, fresh, { amount: 300, taxAmount: 0, status: 'refunded' }, new Date()))).toBe(true);
    expect((await findOrder(database.db, id, [organizationId]))).toMatchObject({ refundedAmount: 500, status: 'refunded' });
  });

  it('takes the whole remaining tax with the last refund, so rounding strands nothing', () => {
    const order = { netAmount: 1000, appliedBalanceAmount: 0, refundedAmount: 0, taxAmount: 333, refundedTaxAmount: 0 };
    expect(refundTaxFor(order, 1)).toBe(0);
    expect(refundTaxFor(order, 500)).toBe(167);
    expect(refundTaxFor({ ...order, refundedAmount: 500, refundedTaxAmount: 167 }, 500)).toBe(166);
    expect(refundTaxFor({ ...order, taxAmount: 0 }, 500)).toBe(0);
  });
});
