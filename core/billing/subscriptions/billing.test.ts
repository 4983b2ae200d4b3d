import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../db/migrate.js';
import { advanceOrganizationClock } from '../../jobs/advance.js';
import { organizationClock } from '../../jobs/clock.js';
import { JOB_HANDLERS } from '../../jobs/handlers.js';
import { findJob } from '../../jobs/jobs.js';
import type { PaymentProcessor } from '../../payments/processor.js';
import { createSandboxProcessor } from '../../payments/sandbox.js';
import { createTestDatabase, type TestDatabase } from '../../testing/database.js';
import { listEvents } from '../../webhooks/outbox.js';
import { DUNNING_RETRY_DAYS } from './dunning.js';
import { CHARGE_JOB, RENEW_JOB } from './job-kinds.js';
import { findSubscription } from './repository.js';
import { revokeSubscriptionsOfCustomer } from './renewal.js';
import { seedOrganization } from './testing.js';

let database: TestDatabase;
let payments: PaymentProcessor;
// The last day of January: monthly periods must clamp to short months and come back to the 31st, never drift.
const base = { now: () => new Date('2026-01-31T12:00:00.000Z') };
const DAY = 86_400_000;

const advance = (organizationId: string, to: Date) =>
  advanceOrganizationClock({ db: database.db, clock: base, payments, baseUrl: 'http://till.test', handlers: JOB_HANDLERS, onError: (e) => console.error(e) }, organizationId, to);

const ordersOf = async (subscriptionId: string) =>
  (await database.db('orders').where({ subscription_id: subscriptionId }).orderBy('created_at')).map((row) => ({
    status: String(row.status),
    billingReason: String(row.billing_reason),
    total: Number(row.total_amount),
    discount: Number(row.discount_amount),
  }));

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateToLatest(database.db);
  payments = createSandboxProcessor({ db: database.db });
});
afterAll(async () => {
  await database?.destroy();
});

describe('subscription billing on the organization clock', () => {
  it('starts active on a period of one interval, schedules its renewal, and announces created and active', async () => {
    const world = await seedOrganization(database.db, base);
    const plan = await world.product('Pro', 1500);
    const created = await world.subscribe(base, plan);
    expect(created).toMatchObject({ status: 'active', currentPeriodStart: base.now(), currentPeriodEnd: new Date('2026-02-28T12:00:00.000Z') });
    expect((await findJob(database.db, RENEW_JOB, created.id))?.runAt).toEqual(new Date('2026-02-28T12:00:00.000Z'));
    const types = (await listEvents(database.db, world.organizationId)).map((e) => e.payload.type).filter((t) => t.startsWith('subscription.'));
    expect(types).toEqual(['subscription.created', 'subscription.active']);
  });

  it('renews twelve times in a year, each a paid subscription_cycle order, on periods that never drift', async () => {
    const world = await seedOrganization(database.db, base);
    await world.card(payments, 'tok_visa');
    const plan = await world.product('Pro', 1500);
    const { id } = await world.subscribe(base, plan);
    const result = await advance(world.organizationId, new Date('2027-01-31T12:00:00.000Z'));
    expect(result.jobsFailed).toBe(0);
    const orders = await ordersOf(id);
    expect(orders).toHaveLength(12);
    expect(orders.every((o) => o.status === 'paid' && o.billingReason === 'subscription_cycle' && o.total === 1500)).toBe(true);
    const s = await findSubscription(database.db, id, 'any');
    expect(s).toMatchObject({ status: 'active', cycle: 12, currentPeriodStart: new Date('2027-01-31T12:00:00.000Z'), currentPeriodEnd: new Date('2027-02-28T12:00:00.000Z') });
    const payments_ = await database.db('payments').where({ organization_id: world.organizationId, status: 'succeeded' });
    expect(payments_).toHaveLength(12);
    expect((await findJob(database.db, CHARGE_JOB, id))).toBeUndefined();
  });

  it('goes past_due when a renewal is declined, retries on the published schedule, then cancels and ends', async () => {
    const world = await seedOrganization(database.db, base);
    await world.card(payments, 'tok_chargeCustomerFail');
    const plan = await world.product('Pro', 1500);
    const { id } = await world.subscribe(base, plan);
    const renewal = new Date('2026-02-28T12:00:00.000Z');
    await advance(world.organizationId, renewal);
    let s = await findSubscription(database.db, id, 'any');
    expect(s).toMatchObject({ status: 'past_due', pastDueAt: renewal, dunningAttempts: 1 });
    expect((await findJob(database.db, CHARGE_JOB, id))?.runAt).toEqual(new Date(renewal.getTime() + DUNNING_RETRY_DAYS[0] * DAY));

    // Every retry but the last leaves it past_due; the last one ends it.
    let at = renewal.getTime();
    for (const [i, days] of DUNNING_RETRY_DAYS.entries()) {
      at += days * DAY;
      await advance(world.organizationId, new Date(at));
      s = await findSubscription(database.db, id, 'any');
      if (i < DUNNING_RETRY_DAYS.length - 1) expect(s).toMatchObject({ status: 'past_due', dunningAttempts: i + 2 });
    }
    expect(s).toMatchObject({ status: 'canceled', endedAt: new Date(at), dunningOrderId: null });
    expect(await database.db('payments').where({ organization_id: world.organizationId, status: 'failed' })).toHaveLength(DUNNING_RETRY_DAYS.length + 1);
    expect(await ordersOf(id)).toEqual([{ status: 'pending', billingReason: 'subscription_cycle', total: 1500, discount: 0 }]);
    expect(await findJob(database.db, RENEW_JOB, id)).toBeUndefined();
    const types = (await listEvents(database.db, world.organizationId)).map((e) => e.payload.type).filter((t) => t.startsWith('subscription.'));
    expect(types.slice(-3)).toEqual(['subscription.updated', 'subscription.canceled', 'subscription.revoked']);
    // subscription.past_due comes once, with the update of the first declined renewal, not with each retry.
    const pastDue = types.indexOf('subscription.past_due');
    expect(types.filter((t) => t === 'subscription.past_due')).toHaveLength(1);
    expect(types[pastDue - 1]).toBe('subscription.updated');
  });

  it('becomes active again when a dunning retry goes through, and renews on its period after that', async () => {
    const world = await seedOrganization(database.db, base);
    const failing = await world.card(payments, 'tok_chargeCustomerFail');
    const plan = await world.product('Pro', 1500);
    const { id } = await world.subscribe(base, plan, { paymentMethodId: failing.id });
    await advance(world.organizationId, new Date('2026-02-28T12:00:00.000Z'));
    expect((await findSubscription(database.db, id, 'any'))?.status).toBe('past_due');
    // The customer's card is replaced: the subscription's own method is gone, the newest saved one is charged.
    const good = await world.card(payments, 'tok_visa');
    await database.db('subscriptions').where({ id }).update({ payment_method_id: good.id });
    await advance(world.organizationId, new Date('2026-03-02T12:00:00.000Z'));
    expect(await findSubscription(database.db, id, 'any')).toMatchObject({ status: 'active', pastDueAt: null, dunningAttempts: 0, cycle: 1 });
    const types = (await listEvents(database.db, world.organizationId)).map((e) => e.payload.type).filter((t) => t.startsWith('subscription.'));
    expect(types.slice(-2)).toEqual(['subscription.updated', 'subscription.active']);
    expect(types.filter((t) => t === 'subscription.past_due')).toHaveLength(1);
    expect((await ordersOf(id)).map((o) => o.status)).toEqual(['paid']);
    await advance(world.organizationId, new Date('2026-03-31T12:00:00.000Z'));
    expect((await ordersOf(id)).map((o) => o.status)).toEqual(['paid', 'paid']);
  });

  it('trials until the trial ends, announcing subscription.active at its start, then charges the first period and becomes active', async () => {
    const world = await seedOrganization(database.db, base);
    await world.card(payments, 'tok_visa');
    const plan = await world.product('Pro', 1500);
    const trialEnd = new Date(base.now().getTime() + 14 * DAY);
    const created = await world.subscribe(base, plan, { trialEnd });
    expect(created).toMatchObject({ status: 'trialing', currentPeriodEnd: trialEnd });
    expect(await ordersOf(created.id)).toEqual([]);
    await advance(world.organizationId, trialEnd);
    const s = await findSubscription(database.db, created.id, 'any');
    expect(s).toMatchObject({ status: 'active', cycle: 0, currentPeriodStart: trialEnd, trialEnd });
    expect(s?.currentPeriodEnd).toEqual(new Date('2026-03-14T12:00:00.000Z'));
    expect(await ordersOf(created.id)).toEqual([{ status: 'paid', billingReason: 'subscription_cycle', total: 1500, discount: 0 }]);
    // As Polar: a trial already gives access, so subscription.active comes with the trial's start and not at its end.
    const types = (await listEvents(database.db, world.organizationId)).map((e) => e.payload.type).filter((t) => t.startsWith('subscription.'));
    expect(types.slice(0, 2)).toEqual(['subscription.created', 'subscription.active']);
    expect(types.slice(2).length).toBeGreaterThan(0);
    expect(types.slice(2).every((type) => type === 'subscription.updated')).toBe(true);
  });

  it('takes a repeating discount off the renewals within its months and not after', async () => {
    const world = await seedOrganization(database.db, base);
    await world.card(payments, 'tok_visa');
    const plan = await world.product('Pro', 2000);
    const discountId = (await database.db('discounts').insert({
      id: crypto.randomUUID(), organization_id: world.organizationId, name: 'Quarter off', type: 'percentage', duration: 'repeating',
      duration_in_months: 3, basis_points: 2500, redemptions_count: 1, metadata: '{}', created_at: base.now().toISOString(),
    }).returning('id'))[0].id as string;
    const { id } = await world.subscribe(base, plan, { discountId });
    // The checkout's charge took the first month; renewals 1 and 2 are within the three months, renewal 3 is not.
    await advance(world.organizationId, new Date('2026-05-31T12:00:00.000Z'));
    expect((await ordersOf(id)).map((o) => o.total)).toEqual([1500, 1500, 2000, 2000]);
    expect((await findSubscription(database.db, id, 'any'))?.discountId).toBeNull();
  });

  it('ends at the period end when set to cancel then, and lets the organization clock say when that is', async () => {
    const world = await seedOrganization(database.db, base);
    await world.card(payments, 'tok_visa');
    const plan = await world.product('Pro', 1500);
    const { id } = await world.subscribe(base, plan);
    await database.db('subscriptions').where({ id }).update({ cancel_at_period_end: true, ends_at: '2026-02-28T12:00:00.000Z' });
    await advance(world.organizationId, new Date('2026-03-15T00:00:00.000Z'));
    expect(await findSubscription(database.db, id, 'any')).toMatchObject({ status: 'canceled', endedAt: new Date('2026-02-28T12:00:00.000Z') });
    expect(await ordersOf(id)).toEqual([]);
    expect((await organizationClock(database.db, base, world.organizationId)).now()).toEqual(new Date('2026-03-15T00:00:00.000Z'));
  });

  it('ends at its period end instead of renewing when its customer was deleted', async () => {
    const world = await seedOrganization(database.db, base);
    await world.card(payments, 'tok_visa');
    const { id } = await world.subscribe(base, await world.product('Pro', 1500));
    await database.db('customers').where({ id: world.customerId }).update({ deleted_at: base.now().toISOString() });
    await advance(world.organizationId, new Date('2026-03-15T00:00:00.000Z'));
    expect(await findSubscription(database.db, id, 'any')).toMatchObject({ status: 'canceled', endedAt: new Date('2026-02-28T12:00:00.000Z') });
    expect(await ordersOf(id)).toEqual([]);
    expect(await database.db('payments').where({ organization_id: world.organizationId })).toHaveLength(0);
  });

  it('revokes every running subscription of a customer at once when the deletion asks it to', async () => {
    const world = await seedOrganization(database.db, base);
    const plan = await world.product('Pro', 1500);
    const running = [await world.subscribe(base, plan), await world.subscribe(base, plan, { trialEnd: new Date('2026-02-14T00:00:00.000Z') })];
    await database.db.transaction((trx) => revokeSubscriptionsOfCustomer(trx, base, 'http://till.test', world.customerId));
    for (const { id } of running) expect(await findSubscription(database.db, id, 'any')).toMatchObject({ status: 'canceled', endedAt: base.now() });
    expect(await findJob(database.db, RENEW_JOB, running[0].id)).toBeUndefined();
  });
});
