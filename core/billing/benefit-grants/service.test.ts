import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../db/columns.js';
import { migrateToLatest } from '../../db/migrate.js';
import { advanceOrganizationClock } from '../../jobs/advance.js';
import { organizationClock } from '../../jobs/clock.js';
import { JOB_HANDLERS } from '../../jobs/handlers.js';
import type { PaymentProcessor } from '../../payments/processor.js';
import { createSandboxProcessor } from '../../payments/sandbox.js';
import { createTestDatabase, type TestDatabase } from '../../testing/database.js';
import { listEvents } from '../../webhooks/outbox.js';
import { insertBenefit } from '../benefits/repository.js';
import type { Benefit } from '../benefits/schema.js';
import { findCustomers } from '../customers/repository.js';
import { customerStateOf } from '../customer-state/service.js';
import { endSubscription } from '../subscriptions/renewal.js';
import { findSubscriptionsByIds } from '../subscriptions/repository.js';
import { seedOrganization } from '../subscriptions/testing.js';
import { grantBenefits } from './service.js';

let database: TestDatabase;
let payments: PaymentProcessor;
const base = { now: () => new Date('2026-03-15T09:00:00.000Z') };

const advance = (organizationId: string, to: Date) =>
  advanceOrganizationClock({ db: database.db, clock: base, payments, baseUrl: 'http://till.test', handlers: JOB_HANDLERS, onError: (e) => console.error(e) }, organizationId, to);

/** A benefit of the organization attached to the product, as the catalog stores them. */
async function attach(organizationId: string, productId: string, benefit: Pick<Benefit, 'type' | 'properties'>, position: number): Promise<string> {
  const id = newId();
  await insertBenefit(database.db, {
    id, organizationId, description: `${benefit.type} benefit`, selectable: true, deletable: true, visibility: null, metadata: { tier: 'pro' },
    createdAt: base.now(), modifiedAt: null, deletedAt: null, ...benefit,
  } as Benefit);
  await database.db('product_benefits').insert({ product_id: productId, benefit_id: id, position });
  return id;
}

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateToLatest(database.db);
  payments = createSandboxProcessor({ db: database.db });
});
afterAll(async () => {
  await database?.destroy();
});

describe('benefits of a subscription over a year of renewals', () => {
  it('grants at the start, cycles at every renewal, shows in the customer state, and revokes when it ends', async () => {
    const org = await seedOrganization(database.db, base);
    const plan = await org.product('Pro', 1000);
    const meterId = newId();
    await attach(org.organizationId, plan.id, { type: 'meter_credit', properties: { units: 50, rollover: false, meter_id: meterId } }, 0);
    await attach(org.organizationId, plan.id, { type: 'license_keys', properties: { prefix: 'pro', expires: null, activations: null, limit_usage: null } }, 1);
    const card = await org.card(payments, 'tok_visa');
    const started = await org.subscribe(base, plan, { paymentMethodId: card.id });
    await database.db.transaction(async (trx) => {
      const clock = await organizationClock(trx, base, org.organizationId);
      await grantBenefits(trx, clock, { organizationId: org.organizationId, customerId: org.customerId, productId: plan.id, orderId: null, subscriptionId: started.id });
    });

    const customer = (await findCustomers(database.db, { id: org.customerId }, [org.organizationId]))[0]!;
    const state = await customerStateOf(database.db, customer);
    expect(state.active_subscriptions).toMatchObject([{ id: started.id, status: 'active', amount: 1000, currency: 'usd', recurring_interval: 'month', meters: [] }]);
    expect(state.granted_benefits.map((g) => [g.benefit_type, g.benefit_metadata]).sort()).toEqual([['license_keys', { tier: 'pro' }], ['meter_credit', { tier: 'pro' }]]);

    await advance(org.organizationId, new Date('2027-03-16T09:00:00.000Z'));
    const ledger = (await database.db('meter_credits').where({ customer_id: org.customerId }).orderBy('seq')).map((row) => `${row.kind}:${Number(row.units)}`);
    expect(ledger).toEqual(['credited:50', ...Array.from({ length: 12 }, () => ['reset:0', 'credited:50']).flat()]);
    const cycled = await listEvents(database.db, org.organizationId, { type: 'benefit_grant.cycled' });
    expect(cycled).toHaveLength(24);
    // The license key is issued once, not per renewal.
    expect(await database.db('license_keys').where({ customer_id: org.customerId })).toHaveLength(1);

    await database.db.transaction(async (trx) => {
      const [current] = await findSubscriptionsByIds(trx, [started.id]);
      const clock = await organizationClock(trx, base, org.organizationId);
      await endSubscription(trx, clock, 'http://till.test', current!, clock.now());
    });
    const after = await customerStateOf(database.db, customer);
    expect(after.active_subscriptions).toEqual([]);
    expect(after.granted_benefits).toEqual([]);
    expect(await database.db('license_keys').where({ customer_id: org.customerId }).first()).toMatchObject({ status: 'revoked' });
    expect((await database.db('meter_credits').where({ customer_id: org.customerId }).orderBy('seq', 'desc').first()).units).toSatisfy((u: unknown) => Number(u) === -50);
    const lastState = (await listEvents(database.db, org.organizationId, { type: 'customer.state_changed' })).at(-1)!.payload.data as { active_subscriptions: unknown[]; granted_benefits: unknown[] };
    expect(lastState).toMatchObject({ active_subscriptions: [], granted_benefits: [] });
  });
});
