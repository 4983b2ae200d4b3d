import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../db/columns.js';
import { migrateToLatest } from '../../db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../../testing/database.js';
import { listEvents } from '../../webhooks/outbox.js';
import { findOrder } from './repository.js';
import type { OrderCreateInput } from './schema.js';
import { createOrder, markOrderPaid } from './service.js';

let database: TestDatabase;
let organizationId: string;
let customerId: string;
const clock = { now: () => new Date('2026-03-01T10:00:00Z') };

function orderInput(overrides: Partial<OrderCreateInput> = {}): OrderCreateInput {
  return {
    organizationId,
    customerId,
    productId: null,
    subscriptionId: null,
    checkoutId: null,
    billingReason: 'purchase',
    currency: 'usd',
    items: [{ label: 'Pro plan', amount: 2000, taxAmount: 500, proration: false, productPriceId: null }],
    subtotalAmount: 2000,
    discountAmount: 0,
    discountId: null,
    netAmount: 2000,
    taxAmount: 500,
    totalAmount: 2500,
    status: 'paid',
    paymentId: null,
    billingName: 'Ada Lovelace',
    billingAddress: { line1: null, line2: null, postal_code: null, city: null, state: null, country: 'FR' },
    metadata: {},
    customFieldData: {},
    ...overrides,
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateToLatest(database.db);
  organizationId = newId();
  await database.db('organization').insert({ id: organizationId, name: 'Acme', slug: 'acme-labs', createdAt: new Date().toISOString() });
  customerId = newId();
  await database.db('customers').insert({
    id: customerId, organization_id: organizationId, email: 'ada@example.com', email_lower: 'ada@example.com', email_verified: false,
    type: 'individual', name: 'Ada', metadata: '{}', created_at: new Date().toISOString(),
  });
});
afterAll(async () => {
  await database?.destroy();
});

describe('createOrder', () => {
  it('creates a paid order with consecutive invoice numbers and announces order.created then order.paid', async () => {
    const first = await database.db.transaction((trx) => createOrder(trx, clock, orderInput()));
    const second = await database.db.transaction((trx) => createOrder(trx, clock, orderInput()));
    expect(first.status).toBe('paid');
    const [a, b] = [await findOrder(database.db, first.id, [organizationId]), await findOrder(database.db, second.id, [organizationId])];
    expect(a?.invoiceNumber).toMatch(/^ACMELABS-\d{4}$/);
    expect(Number(b!.invoiceNumber.slice(-4))).toBe(Number(a!.invoiceNumber.slice(-4)) + 1);
    expect(a?.items).toMatchObject([{ label: 'Pro plan', amount: 2000, taxAmount: 500 }]);
    const events = (await listEvents(database.db, organizationId)).filter((e) => (e.payload.data as { id: string }).id === first.id);
    expect(events.map((e) => e.payload.type)).toEqual(['order.created', 'order.paid']);
    expect(events[0].payload.data).toMatchObject({ id: first.id, status: 'paid', total_amount: 2500, customer: { id: customerId }, refundable_amount: 2000 });
  });

  it('refuses amounts that do not add up and writes nothing', async () => {
    const before = await database.db('orders').count<{ n: number }[]>({ n: '*' });
    await expect(database.db.transaction((trx) => createOrder(trx, clock, orderInput({ totalAmount: 2400 })))).rejects.toThrow(/total_amount/);
    await expect(database.db.transaction((trx) => createOrder(trx, clock, orderInput({ subtotalAmount: 1999, netAmount: 1999, totalAmount: 2499 })))).rejects.toThrow(/items add up/);
    await expect(database.db.transaction((trx) => createOrder(trx, clock, orderInput({ customerId: newId() })))).rejects.toThrow(/customer/);
    const after = await database.db('orders').count<{ n: number }[]>({ n: '*' });
    expect(Number(after[0].n)).toBe(Number(before[0].n));
  });

  it('marks a pending order paid once, announcing order.updated and order.paid', async () => {
    const { id } = await database.db.transaction((trx) => createOrder(trx, clock, orderInput({ status: 'pending', billingReason: 'subscription_cycle' })));
    await database.db.transaction((trx) => markOrderPaid(trx, clock, id, 'payment-1'));
    const order = await findOrder(database.db, id, [organizationId]);
    expect(order).toMatchObject({ status: 'paid', paymentId: 'payment-1' });
    const types = (await listEvents(database.db, organizationId)).filter((e) => (e.payload.data as { id: string }).id === id).map((e) => e.payload.type);
    expect(types).toEqual(['order.created', 'order.updated', 'order.paid']);
    await expect(database.db.transaction((trx) => markOrderPaid(trx, clock, id, 'payment-2'))).rejects.toThrow(/not pending/);
  });
});
