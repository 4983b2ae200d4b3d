import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../../testing/database.js';
import { race } from '../../testing/race.js';
import { claimRedemption, deleteDiscount, findDiscount, findDiscountByCode, insertDiscount } from './repository.js';
import type { StoredDiscount } from './schema.js';

let database: TestDatabase;
let organizationId: string;

async function seedDiscount(overrides: Partial<StoredDiscount> = {}): Promise<StoredDiscount> {
  const discount: StoredDiscount = {
    id: newId(),
    organizationId,
    name: 'Launch',
    code: null,
    type: 'percentage',
    basisPoints: 1000,
    duration: 'once',
    durationInMonths: null,
    startsAt: null,
    endsAt: null,
    maxRedemptions: null,
    redemptionsCount: 0,
    metadata: {},
    productIds: [],
    createdAt: new Date(),
    modifiedAt: null,
    ...overrides,
  } as StoredDiscount;
  expect(await database.db.transaction((trx) => insertDiscount(trx, discount))).toBe(true);
  return discount;
}

/** Claims `count` redemptions at once, spread over `pools` separate connection pools (as separate processes would). */
async function claimConcurrently(id: string, count: number, pools: Database[]): Promise<number> {
  const results = await Promise.all(
    Array.from({ length: count }, (_, i) => pools[i % pools.length].transaction((trx) => claimRedemption(trx, id))),
  );
  return results.filter(Boolean).length;
}

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateToLatest(database.db);
  organizationId = newId();
  await database.db('organization').insert({ id: organizationId, name: 'Claims Co', slug: `claims-${organizationId}`, createdAt: new Date().toISOString() });
});
afterAll(async () => {
  await database?.destroy();
});

describe('discount redemptions', () => {
  it('never counts more redemptions than max_redemptions when claims race on one pool', async () => {
    const discount = await seedDiscount({ maxRedemptions: 3 });
    expect(await claimConcurrently(discount.id, 24, [database.db])).toBe(3);
    expect((await findDiscount(database.db, discount.id, [organizationId]))?.redemptionsCount).toBe(3);
    expect(await database.db.transaction((trx) => claimRedemption(trx, discount.id))).toBe(false);
  });

  it('never counts more redemptions than max_redemptions when claims race on separate connections', async () => {
    const discount = await seedDiscount({ maxRedemptions: 5 });
    // Four worker threads, each with its own connection (on SQLite, to the file, as separate processes would hold),
    // claim ten each from one starting gate.
    const granted = await race(database.config, 'claimRedemptions', Array.from({ length: 4 }, () => ({ discountId: discount.id, count: 10 })));
    expect(granted.reduce((a, b) => a + b, 0)).toBe(5);
    expect((await findDiscount(database.db, discount.id, [organizationId]))?.redemptionsCount).toBe(5);
  });

  it('counts every redemption of a discount without a maximum', async () => {
    const discount = await seedDiscount();
    expect(await claimConcurrently(discount.id, 12, [database.db])).toBe(12);
    expect((await findDiscount(database.db, discount.id, [organizationId]))?.redemptionsCount).toBe(12);
  });

  it('refuses to redeem a deleted discount', async () => {
    const discount = await seedDiscount();
    expect(await deleteDiscount(database.db, discount.id, [organizationId], new Date())).toBe(true);
    expect(await database.db.transaction((trx) => claimRedemption(trx, discount.id))).toBe(false);
  });
});

describe('discount codes', () => {
  it('finds a live discount by its code in any case, and not once deleted', async () => {
    const discount = await seedDiscount({ code: 'Spring25' });
    expect((await findDiscountByCode(database.db, organizationId, 'SPRING25'))?.id).toBe(discount.id);
    expect((await findDiscountByCode(database.db, organizationId, 'spring25'))?.id).toBe(discount.id);
    await deleteDiscount(database.db, discount.id, [organizationId], new Date());
    expect(await findDiscountByCode(database.db, organizationId, 'spring25')).toBeUndefined();
  });

  it('refuses a second live discount with the same code in another case', async () => {
    await seedDiscount({ code: 'Summer' });
    const clash = { ...(await seedDiscount({ code: 'Other' })), id: newId(), code: 'SUMMER' };
    expect(await database.db.transaction((trx) => insertDiscount(trx, clash))).toBe(false);
  });
});
