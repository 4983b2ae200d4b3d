import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../db/columns.js';
import { migrateToLatest } from '../../db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../../testing/database.js';
import { findCheckoutById, insertCheckout, saveCheckout, transitionCheckout } from './repository.js';
import type { StoredCheckout } from './schema.js';
import { CHECKOUT_TRANSITIONS } from './state.js';

let database: TestDatabase;
let organizationId: string;
const now = new Date('2026-03-01T10:00:00Z');

function checkout(overrides: Partial<StoredCheckout> = {}): StoredCheckout {
  return {
    id: newId(), organizationId, status: 'open', clientSecret: `polar_c_${newId()}`, expiresAt: new Date(now.getTime() + 3_600_000),
    successUrl: null, returnUrl: null, embedOrigin: null, productIds: ['p1'], productId: 'p1', productPriceId: 'price1', currency: 'usd',
    customAmount: null, amounts: { subtotalAmount: 1000, discountAmount: 0, netAmount: 1000, taxAmount: 200, totalAmount: 1200 },
    discountId: null, discountClaimed: false, allowDiscountCodes: true, requireBillingAddress: false, allowTrial: true,
    trialInterval: null, trialIntervalCount: null, customerId: null, externalCustomerId: null, customerName: null,
    customerEmail: 'a@example.com', customerIpAddress: null, customerBillingName: null, customerBillingAddress: { line1: null, line2: null, postal_code: null, city: null, state: null, country: 'FR' },
    customerTaxId: null, isBusinessCustomer: false, customerMetadata: {}, customFieldData: { seats: 3 }, metadata: { a: 'b' }, locale: null,
    subscriptionId: null, orderId: null, paymentId: null, createdAt: now, modifiedAt: null,
    ...overrides,
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateToLatest(database.db);
  organizationId = newId();
  await database.db('organization').insert({ id: organizationId, name: 'Acme', slug: `acme-${newId().slice(0, 8)}`, createdAt: new Date().toISOString() });
});
afterAll(async () => {
  await database?.destroy();
});

describe('the checkout repository', () => {
  it('reads back what it stored, amounts and JSON fields included', async () => {
    const stored = checkout();
    await insertCheckout(database.db, stored);
    expect(await findCheckoutById(database.db, stored.id)).toEqual(stored);
  });

  it('moves a status only along the table, and only from the status it was in', async () => {
    const stored = checkout();
    await insertCheckout(database.db, stored);
    expect(await transitionCheckout(database.db, stored.id, 'open', 'confirmed', { modifiedAt: now })).toBe(true);
    // The same claim a second time finds it confirmed already.
    expect(await transitionCheckout(database.db, stored.id, 'open', 'confirmed', { modifiedAt: now })).toBe(false);
    await expect(transitionCheckout(database.db, stored.id, 'succeeded', 'open', { modifiedAt: now })).rejects.toThrow(/not in the table/);
    expect(CHECKOUT_TRANSITIONS.succeeded).toEqual([]);
    expect(CHECKOUT_TRANSITIONS.expired).toEqual([]);
  });

  it('claims a checkout only while it still charges what the caller priced', async () => {
    const stored = checkout();
    await insertCheckout(database.db, stored);
    const priced = { totalAmount: 1200, currency: 'usd', productPriceId: 'price1', discountId: null };
    await saveCheckout(database.db, { ...stored, amounts: { ...stored.amounts, taxAmount: 300, totalAmount: 1300 } });
    expect(await transitionCheckout(database.db, stored.id, 'open', 'confirmed', { modifiedAt: now }, priced)).toBe(false);
    expect(await transitionCheckout(database.db, stored.id, 'open', 'confirmed', { modifiedAt: now }, { ...priced, totalAmount: 1300 })).toBe(true);
  });

  it('does not save changes over a checkout that left the status it was read in', async () => {
    const stored = checkout();
    await insertCheckout(database.db, stored);
    await transitionCheckout(database.db, stored.id, 'open', 'expired', { modifiedAt: now });
    expect(await saveCheckout(database.db, { ...stored, customerName: 'Late' })).toBe(false);
    expect((await findCheckoutById(database.db, stored.id))?.customerName).toBeNull();
  });
});
