import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../db/columns.js';
import { migrateToLatest } from '../../db/migrate.js';
import { findJob } from '../../jobs/jobs.js';
import type { PaymentProcessor } from '../../payments/processor.js';
import { createSandboxProcessor } from '../../payments/sandbox.js';
import { createTestDatabase, type TestDatabase } from '../../testing/database.js';
import { listEvents } from '../../webhooks/outbox.js';
import { findOrder } from '../orders/repository.js';
import { seedPaidOrder } from '../orders/testing.js';
import { findRefund } from './repository.js';
import { createRefund, REFUND_SETTLE_JOB, refundJobs } from './service.js';

let database: TestDatabase;
let organizationId: string;
let customerId: string;
const clock = { now: () => new Date() };
let sandbox: PaymentProcessor;
const access = () => ({ read: new Set([organizationId]), write: new Set([organizationId]) });

/** A processor that takes refunds and never answers: the daemon "stops" between the claim and the answer. */
let stalled: PaymentProcessor;

/** Starts a refund that stays pending, and answers its id once it is recorded. */
async function pendingRefund(orderId: string, amount: number): Promise<string> {
  void createRefund({ db: database.db, clock, payments: stalled }, access(), { order_id: orderId, amount, reason: 'other' });
  for (let i = 0; i < 200; i++) {
    const row = await database.db('refunds').where({ order_id: orderId }).first('id');
    if (row) return row.id;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the refund was never recorded');
}

const runSettleJob = (refundId: string, payments: PaymentProcessor = sandbox) =>
  refundJobs[REFUND_SETTLE_JOB]!({ db: database.db, clock, payments, baseUrl: 'http://till.test' }, { id: newId(), organizationId, kind: REFUND_SETTLE_JOB, subjectId: refundId, runAt: new Date(), attempts: 0 });

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateToLatest(database.db);
  sandbox = createSandboxProcessor({ db: database.db });
  stalled = { ...sandbox, refund: () => new Promise(() => {}) };
  organizationId = newId();
  await database.db('organization').insert({ id: organizationId, name: 'Settle Co', slug: `settle-${organizationId}`, createdAt: new Date().toISOString() });
  customerId = newId();
  await database.db('customers').insert({ id: customerId, organization_id: organizationId, email: 's@example.com', email_lower: 's@example.com', email_verified: false, type: 'individual', metadata: '{}', created_at: new Date().toISOString() });
});
afterAll(async () => {
  await database?.destroy();
});

describe('a refund left pending', () => {
  it('holds its amount on the order and has a settle job waiting', async () => {
    const { id } = await seedPaidOrder(database.db, clock, sandbox, { organizationId, customerId, amount: 1000, taxAmount: 100 });
    const refundId = await pendingRefund(id, 400);
    expect(await findRefund(database.db, refundId)).toMatchObject({ status: 'pending', amount: 400, taxAmount: 40 });
    expect(await findOrder(database.db, id, null)).toMatchObject({ status: 'partially_refunded', refundedAmount: 400 });
    const job = await findJob(database.db, REFUND_SETTLE_JOB, refundId);
    expect(job!.runAt.getTime()).toBeGreaterThan(Date.now() + 4 * 60 * 1000);
  });

  it('is finished by the settle job through the processor, with its events, and the job is gone', async () => {
    const { id } = await seedPaidOrder(database.db, clock, sandbox, { organizationId, customerId, amount: 1000, taxAmount: 0 });
    const refundId = await pendingRefund(id, 250);
    await runSettleJob(refundId);
    expect(await findRefund(database.db, refundId)).toMatchObject({ status: 'succeeded', processorRefundId: expect.stringMatching(/^re_sandbox_/) });
    expect(await findOrder(database.db, id, null)).toMatchObject({ status: 'partially_refunded', refundedAmount: 250 });
    expect(await findJob(database.db, REFUND_SETTLE_JOB, refundId)).toBeUndefined();
    const types = (await listEvents(database.db, organizationId)).filter((e) => [refundId, id].includes((e.payload.data as { id: string }).id)).map((e) => e.payload.type);
    expect(types).toEqual(['order.created', 'order.paid', 'refund.created', 'refund.updated', 'order.updated', 'order.refunded']);
    // Running it again changes nothing.
    await runSettleJob(refundId);
    expect(await findOrder(database.db, id, null)).toMatchObject({ refundedAmount: 250 });
  });

  it('gives the amount back to the order when the processor refuses at settle time', async () => {
    const { id } = await seedPaidOrder(database.db, clock, sandbox, { organizationId, customerId, amount: 1000, taxAmount: 200 });
    const refundId = await pendingRefund(id, 1000);
    expect(await findOrder(database.db, id, null)).toMatchObject({ status: 'refunded', refundedAmount: 1000, refundedTaxAmount: 200 });
    const refusing: PaymentProcessor = { ...sandbox, refund: async () => ({ status: 'failed', processorRefundId: null, message: 'card closed' }) };
    await runSettleJob(refundId, refusing);
    expect(await findRefund(database.db, refundId)).toMatchObject({ status: 'failed', failureReason: 'card closed' });
    expect(await findOrder(database.db, id, null)).toMatchObject({ status: 'paid', refundedAmount: 0, refundedTaxAmount: 0 });
  });
});
