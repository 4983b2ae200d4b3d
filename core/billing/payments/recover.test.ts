import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../db/columns.js';
import { findJob, scheduleJob } from '../../jobs/jobs.js';
import { insertPayment, type NewPayment } from '../../payments/repository.js';
import { createTestDatabase, type TestDatabase } from '../../testing/database.js';
import { PAYMENT_SETTLE_DELAY_MS, PAYMENT_SETTLE_JOB } from './intents.js';
import { settleLeftoversNow } from './recover.js';

let database: TestDatabase;
let organizationId: string;
const AT = new Date('2026-03-01T10:00:00.000Z');

beforeAll(async () => {
  database = await createTestDatabase({ migrated: true });
  organizationId = newId();
  await database.db('organization').insert({ id: organizationId, name: 'Leftovers', slug: `leftovers-${organizationId}`, createdAt: new Date().toISOString() });
});
afterAll(() => database?.destroy());

const intent = (status?: 'succeeded'): NewPayment => ({
  organizationId,
  customerId: null,
  checkoutId: null,
  orderId: null,
  subscriptionId: null,
  purpose: 'checkout',
  attempt: null,
  processor: 'sandbox',
  processorMethodId: 'pm_sandbox_ok_x',
  processorCustomerId: null,
  amount: 1000,
  currency: 'usd',
  offSession: false,
  description: 'Leftover',
  returnUrl: null,
  methodBrand: 'visa',
  methodLast4: '4242',
  methodExpMonth: 12,
  methodExpYear: 2030,
  plan: null,
  createdAt: AT,
  ...(status ? { status } : {}),
});

describe('settling what a killed run left', () => {
  it('brings the settle job of an intent still created forward to its creation, and leaves settled intents alone', async () => {
    const waiting = await insertPayment(database.db, intent());
    const settled = await insertPayment(database.db, intent('succeeded'));
    const later = new Date(AT.getTime() + PAYMENT_SETTLE_DELAY_MS);
    await scheduleJob(database.db, { organizationId, kind: PAYMENT_SETTLE_JOB, subjectId: waiting.id, runAt: later });

    expect(await settleLeftoversNow(database.db)).toBe(1);
    expect((await findJob(database.db, PAYMENT_SETTLE_JOB, waiting.id))?.runAt).toEqual(AT);
    expect(await findJob(database.db, PAYMENT_SETTLE_JOB, settled.id)).toBeUndefined();
  });
});
